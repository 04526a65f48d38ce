import { createHash } from 'node:crypto'
import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { HandlerDefinition, HttpMethod, Logger, MountedRoute } from '../../shared/handler.ts'

/** What build.mjs writes to dist/functions/manifest.json. */
export interface RoutesManifest {
  generatedAt: string
  /** Manifests written before `summary` was listed lack it. */
  bundles: Record<string, { source: string; hash: string; routes: string[]; methods: HttpMethod[]; auth: string; body: string; summary?: string }>
  routes: Record<string, { bundle: string; auth: string; body: string; methods: HttpMethod[]; hash: string }>
}

export interface RouteEntry {
  route: MountedRoute
  /** The handler definition: imported at the first request of one of the bundle's routes, then kept. */
  load(): Promise<HandlerDefinition>
  /** Hash of the bundle's bytes (as the manifest lists it until the bundle is imported): the version being served. */
  hash: string
}

const requireModule = createRequire(import.meta.url)

const loadedEntry = (route: MountedRoute, hash: string, definition: HandlerDefinition): RouteEntry => {
  const loaded = Promise.resolve(definition)
  return { route, hash, load: () => loaded }
}

/**
 * The routes mounted from `dist/functions/manifest.json`, each backed by its own bundle.
 *
 * A bundle is imported at the first request of one of its routes: the routes, methods, auth,
 * body kind and summary come from the manifest (build.mjs imported every bundle to write it),
 * so a start does not compile ~180 bundles it mostly never runs (bench/README.md,
 * device-start). A manifest without summaries (an older build) is imported whole at load.
 *
 * Hot redeploy: the folder is watched; when a bundle (or the manifest) changes, the changed
 * bundles that were imported are imported afresh (a new URL per content hash), the others are
 * read at their first request, and the table is swapped in one assignment. Requests already
 * dispatched keep the definition they started with, so nothing in flight is dropped. A bundle
 * that fails to load keeps its previous version.
 */
export class RouteTable {
  private byPath = new Map<string, RouteEntry>()
  private loaded = new Map<string, { hash: string; definition: HandlerDefinition }>()
  private watcher: FSWatcher | null = null
  private timer: NodeJS.Timeout | null = null
  private reloading: Promise<void> = Promise.resolve()

  constructor(private readonly functionsDir: string, private readonly log: Logger) {}

  /** Paths are matched case-insensitively: the spec itself writes `atomic/Model/` and `atomic/model/`. */
  lookup(pathname: string): RouteEntry | undefined {
    return this.byPath.get(pathname.toLowerCase())
  }

  routes(): MountedRoute[] {
    return [...this.byPath.values()].map((e) => e.route).sort((a, b) => a.path.localeCompare(b.path))
  }

  async load(): Promise<void> {
    const manifestPath = path.join(this.functionsDir, 'manifest.json')
    if (!existsSync(manifestPath)) throw new Error(`no routes manifest at ${manifestPath}: run \`npm run build\``)
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as RoutesManifest
    const next = new Map<string, RouteEntry>()
    for (const [bundle, listed] of Object.entries(manifest.bundles)) {
      const entries = this.loaded.has(bundle) || listed.summary === undefined ? await this.importedEntries(bundle) : this.lazyEntries(bundle, listed)
      for (const entry of entries) {
        const key = entry.route.path.toLowerCase()
        if (next.has(key)) throw new Error(`route ${entry.route.path} is defined by two bundles: ${next.get(key)!.route.bundle} and ${bundle}`)
        next.set(key, entry)
      }
    }
    this.byPath = next
  }

  /** The routes of a bundle imported now (one imported before, or a manifest without summaries). */
  private async importedEntries(bundle: string): Promise<RouteEntry[]> {
    const imported = await this.importBundle(bundle)
    if (!imported) return []
    const { definition, hash } = imported
    return definition.routes.map((routePath) => loadedEntry({
      path: routePath,
      methods: definition.methods ?? ['POST'],
      auth: definition.auth,
      body: definition.body,
      bundle,
      summary: definition.summary,
    }, hash, definition))
  }

  /** The routes of a bundle as the manifest lists them; the bundle is imported by the first `load()`. */
  private lazyEntries(bundle: string, listed: RoutesManifest['bundles'][string]): RouteEntry[] {
    if (!existsSync(path.join(this.functionsDir, bundle))) {
      this.log.error({ bundle }, 'bundle listed in the manifest is missing')
      return []
    }
    let importing: Promise<HandlerDefinition> | null = null
    const load = () => (importing ??= this.firstImport(bundle).catch((error: unknown) => {
      importing = null // the next request tries again (a deploy may be under way)
      throw error
    }))
    return listed.routes.map((routePath) => ({
      route: {
        path: routePath,
        methods: listed.methods,
        auth: listed.auth as MountedRoute['auth'],
        body: listed.body as MountedRoute['body'],
        bundle,
        summary: listed.summary!,
      },
      hash: listed.hash,
      load,
    }))
  }

  /**
   * A bundle's first import, synchronous (`require` of the ES module, Node ≥ 20.19): the first
   * request of a route then runs as later ones do, without waiting for the module loader.
   * node:http ends a connection whose client half-closed while no answer was under way, so an
   * import awaited there would lose that client's answer. A bundle with top-level await, or one
   * imported before (a redeploy), goes through `importBundle`.
   */
  private firstImport(bundle: string): Promise<HandlerDefinition> {
    if (this.loaded.has(bundle)) return this.importBundle(bundle).then((imported) => imported!.definition)
    const file = path.join(this.functionsDir, bundle)
    let bytes: Buffer
    try {
      bytes = readFileSync(file)
    } catch {
      return Promise.reject(new Error(`bundle ${bundle} is missing`))
    }
    try {
      const definition = (requireModule(file) as { default?: HandlerDefinition }).default
      if (!definition || typeof definition.handle !== 'function' || !Array.isArray(definition.routes))
        throw new Error('bundle does not default-export a handler definition')
      this.loaded.set(bundle, { hash: createHash('sha256').update(bytes).digest('hex'), definition })
      return Promise.resolve(definition)
    } catch (error) {
      if ((error as { code?: string }).code !== 'ERR_REQUIRE_ASYNC_MODULE') return Promise.reject(error)
      return this.importBundle(bundle).then((imported) => {
        if (!imported) throw new Error(`bundle ${bundle} is missing`)
        return imported.definition
      })
    }
  }

  private async importBundle(bundle: string) {
    const file = path.join(this.functionsDir, bundle)
    let bytes: Buffer
    try {
      bytes = readFileSync(file)
    } catch (error) {
      this.log.error({ bundle, err: error }, 'bundle listed in the manifest is missing')
      return this.loaded.get(bundle) ?? null
    }
    const hash = createHash('sha256').update(bytes).digest('hex')
    const previous = this.loaded.get(bundle)
    if (previous?.hash === hash) return previous
    try {
      const module = await import(`${pathToFileURL(file).href}?v=${hash}`)
      const definition = module.default as HandlerDefinition
      if (!definition || typeof definition.handle !== 'function' || !Array.isArray(definition.routes))
        throw new Error('bundle does not default-export a handler definition')
      const entry = { hash, definition }
      this.loaded.set(bundle, entry)
      if (previous) this.log.info({ bundle, hash: hash.slice(0, 12) }, 'handler redeployed')
      return entry
    } catch (error) {
      if (!previous) throw error
      this.log.error({ bundle, err: error }, 'redeployed bundle failed to load; keeping the previous version')
      return previous
    }
  }

  /** Starts watching the bundle folder for redeploys. */
  watch(): void {
    if (this.watcher) return
    this.watcher = watch(this.functionsDir, { recursive: true }, () => {
      if (this.timer) clearTimeout(this.timer)
      // Builds write several files; reload once they settle.
      this.timer = setTimeout(() => {
        this.reloading = this.reloading.then(() => this.load()).catch((error) => this.log.error({ err: error }, 'route reload failed'))
      }, 150)
    })
  }

  async close(): Promise<void> {
    this.watcher?.close()
    this.watcher = null
    if (this.timer) clearTimeout(this.timer)
    await this.reloading
  }
}
