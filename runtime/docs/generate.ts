import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { HandlerDefinition } from '../../shared/handler.ts'
import type { RoutesManifest } from '../http/route-table.ts'
import { renderHttpDocument, renderMqttDocument } from './html.ts'
import { buildOpenApi } from './openapi.ts'
import { DOCUMENT_PATHS, OPENAPI_PATH, type DocRoute, type MqttDoc } from './model.ts'

/** Reads every bundle listed in the routes manifest and returns its routes with summary and input schema. */
export async function collectRoutes(functionsDir: string): Promise<DocRoute[]> {
  const manifest = JSON.parse(readFileSync(path.join(functionsDir, 'manifest.json'), 'utf8')) as RoutesManifest
  const routes: DocRoute[] = []
  for (const [bundle, entry] of Object.entries(manifest.bundles)) {
    const url = `${pathToFileURL(path.join(functionsDir, bundle)).href}?v=${entry.hash}`
    const definition = (await import(url)).default as HandlerDefinition
    for (const routePath of definition.routes) {
      routes.push({
        path: routePath,
        methods: definition.methods ?? ['POST'],
        auth: definition.auth,
        body: definition.body,
        summary: definition.summary,
        input: JSON.parse(JSON.stringify(definition.input ?? {})),
        bundle,
      })
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path))
}

function writeAtomically(file: string, contents: string) {
  mkdirSync(path.dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, contents)
  renameSync(temporary, file)
}

/**
 * Writes the packaged interface documents into `<dist>/staticfile/` (spec 4.11, 9) and the
 * collected route data into `<dist>/docs/routes.json` (read by tests and by nothing at run time).
 */
export async function generateDocs({ dist, mqtt, softwareVersion }: { dist: string; mqtt: MqttDoc | null; softwareVersion: string }) {
  const routes = await collectRoutes(path.join(dist, 'functions'))
  const info = { softwareVersion, generatedAt: new Date().toISOString() }
  const staticDir = path.join(dist, 'staticfile')
  writeAtomically(path.join(staticDir, path.basename(DOCUMENT_PATHS[0])), renderHttpDocument(routes, info))
  writeAtomically(path.join(staticDir, path.basename(DOCUMENT_PATHS[1])), renderMqttDocument(mqtt, info))
  writeAtomically(path.join(staticDir, path.basename(OPENAPI_PATH)), JSON.stringify(buildOpenApi(routes, info), null, 2))
  writeAtomically(path.join(dist, 'docs', 'routes.json'), JSON.stringify({ ...info, routes, mqtt }, null, 2))
  return { routes: routes.length }
}
