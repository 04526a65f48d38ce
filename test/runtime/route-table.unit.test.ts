/**
 * runtime/http/route-table.ts: routes are mounted from the manifest and a bundle is imported at
 * its first request; a manifest without summaries (an older build) is imported whole at load.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { RouteTable, type RoutesManifest } from '../../runtime/http/route-table.ts'
import type { Logger } from '../../shared/handler.ts'

const dirs: string[] = []
afterEach(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }) })

/** A logger that records `[level, message]`. */
function recordingLog() {
  const lines: [string, string][] = []
  const log = Object.fromEntries(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map((level) => [level, (_: unknown, msg?: string) => { lines.push([level, msg ?? String(_)]) }])) as unknown as Logger
  ;(log as unknown as { child: () => Logger }).child = () => log
  return { log, lines }
}

/** A bundle whose import counts itself on globalThis and default-exports a definition (or throws). */
const bundleSource = (name: string, routes: string[], broken = false) => broken
  ? `globalThis.__routeTableImports = [...(globalThis.__routeTableImports ?? []), ${JSON.stringify(name)}]\nthrow new Error('broken bundle ${name}')\n`
  : `globalThis.__routeTableImports = [...(globalThis.__routeTableImports ?? []), ${JSON.stringify(name)}]
export default { routes: ${JSON.stringify(routes)}, methods: ['POST'], auth: 'anonymous', body: 'json', summary: 'Summary of ${name}.', handle: async () => ({ from: ${JSON.stringify(name)} }) }\n`

function functionsDir(bundles: { name: string; routes: string[]; broken?: boolean }[], withSummary = true): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'route-table-'))
  dirs.push(dir)
  const manifest: RoutesManifest = { generatedAt: new Date().toISOString(), bundles: {}, routes: {} }
  for (const { name, routes, broken } of bundles) {
    // A distinct file name per test: the module cache keys imports by URL and hash.
    writeFileSync(path.join(dir, name), bundleSource(`${path.basename(dir)}/${name}`, routes, broken))
    manifest.bundles[name] = { source: `functions/${name}`, hash: 'h', routes, methods: ['POST'], auth: 'anonymous', body: 'json', ...(withSummary ? { summary: `Summary of ${name}.` } : {}) }
  }
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest))
  return dir
}

const imports = () => ((globalThis as { __routeTableImports?: string[] }).__routeTableImports ?? [])

describe('RouteTable', () => {
  it('mounts the manifest\'s routes without importing a bundle; imports one bundle at its first load, once', async () => {
    const dir = functionsDir([{ name: 'a.mjs', routes: ['/v1/a', '/v1/a2'] }, { name: 'b.mjs', routes: ['/v1/b'] }])
    const table = new RouteTable(dir, recordingLog().log)
    await table.load()
    // The manifest's summaries (the definitions' own name the folder too).
    expect(table.routes()).toEqual([
      { path: '/v1/a', methods: ['POST'], auth: 'anonymous', body: 'json', bundle: 'a.mjs', summary: 'Summary of a.mjs.' },
      { path: '/v1/a2', methods: ['POST'], auth: 'anonymous', body: 'json', bundle: 'a.mjs', summary: 'Summary of a.mjs.' },
      { path: '/v1/b', methods: ['POST'], auth: 'anonymous', body: 'json', bundle: 'b.mjs', summary: 'Summary of b.mjs.' },
    ])
    const mine = () => imports().filter((name) => name.startsWith(path.basename(dir)))
    expect(mine()).toEqual([])
    const [first, second] = await Promise.all([table.lookup('/v1/a')!.load(), table.lookup('/V1/A2')!.load()])
    expect(first).toBe(second)
    expect(await first.handle({} as never, {} as never)).toEqual({ from: `${path.basename(dir)}/a.mjs` })
    expect(mine()).toEqual([`${path.basename(dir)}/a.mjs`])
    // A reload keeps the imported definition (same bytes) and still leaves b alone.
    await table.load()
    expect(await table.lookup('/v1/a')!.load()).toBe(first)
    expect(mine()).toEqual([`${path.basename(dir)}/a.mjs`])
  })

  it('a bundle that fails to import fails its own requests, not the load; a missing one is not mounted', async () => {
    const dir = functionsDir([{ name: 'ok.mjs', routes: ['/v1/ok'] }, { name: 'bad.mjs', routes: ['/v1/bad'], broken: true }, { name: 'gone.mjs', routes: ['/v1/gone'] }])
    rmSync(path.join(dir, 'gone.mjs'))
    const { log, lines } = recordingLog()
    const table = new RouteTable(dir, log)
    await table.load()
    expect(table.routes().map((r) => r.path)).toEqual(['/v1/bad', '/v1/ok'])
    expect(lines).toContainEqual(['error', 'bundle listed in the manifest is missing'])
    await expect(table.lookup('/v1/bad')!.load()).rejects.toThrow('broken bundle')
    expect((await table.lookup('/v1/ok')!.load()).routes).toEqual(['/v1/ok'])
  })

  it('a manifest without summaries (an older build) is imported whole at load, and a broken bundle fails the load', async () => {
    const dir = functionsDir([{ name: 'old.mjs', routes: ['/v1/old'] }], false)
    const table = new RouteTable(dir, recordingLog().log)
    await table.load()
    expect(imports()).toContain(`${path.basename(dir)}/old.mjs`)
    // The summary is the definition's own (the manifest's would lack the folder name).
    expect(table.routes()).toEqual([{ path: '/v1/old', methods: ['POST'], auth: 'anonymous', body: 'json', bundle: 'old.mjs', summary: `Summary of ${path.basename(dir)}/old.mjs.` }])
    const broken = functionsDir([{ name: 'bad.mjs', routes: ['/v1/bad'], broken: true }], false)
    await expect(new RouteTable(broken, recordingLog().log).load()).rejects.toThrow('broken bundle')
  })
})
