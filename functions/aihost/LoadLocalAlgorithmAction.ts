import { readFile, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import { PipelineManifest } from '../../models/manifest-schema.ts'

/** Algorithm packages an operator placed on the device: `<DATA_DIR>/algorithms/<name>/manifest.json`. */
const algorithmsDir = (dataPath: string) => path.join(dataPath, 'algorithms')
const MANIFEST_MAX_BYTES = 1024 * 1024

export default defineHandler({
  routes: ['/v1/cwai/aihost/LoadLocalAlgorithmAction'],
  auth: 'session',
  body: 'json',
  summary: 'Checks an algorithm package already on the device (folder confined to DATA_DIR/algorithms); run-time registration is not supported yet.',
  input: Type.Object({
    // A folder name (or name/name) inside the algorithm folder: no absolute path, no `..`.
    path: Type.String({ pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}(/[A-Za-z0-9_][A-Za-z0-9._-]{0,63}){0,3}$' }),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const base = algorithmsDir(ctx.config.dataPath)
    let manifestFile: string
    try {
      const [realBase, realFile] = await Promise.all([realpath(base), realpath(path.join(base, input.path, 'manifest.json'))])
      // Links may not lead out of the algorithm folder.
      if (!realFile.startsWith(realBase + path.sep)) throw new Error('outside')
      manifestFile = realFile
    } catch {
      throw invalidParam('/path', 'no manifest.json in that folder of the algorithm directory', { folder: 'algorithms' })
    }
    if ((await stat(manifestFile)).size > MANIFEST_MAX_BYTES) throw invalidParam('/path', 'manifest.json is too large')
    let manifest: unknown
    try {
      manifest = JSON.parse(await readFile(manifestFile, 'utf8'))
    } catch {
      throw new ApiError('ActionAlgLoadFailed', { details: { path: input.path, reason: 'manifest.json is not valid JSON' } })
    }
    if (!Value.Check(PipelineManifest, manifest)) {
      const first = [...Value.Errors(PipelineManifest, manifest)][0]
      throw new ApiError('ActionAlgLoadFailed', { details: { path: input.path, reason: first ? `${first.path || '/'}: ${first.message}` : 'invalid pipeline manifest' } })
    }
    const valid = manifest as { algorithmId: string; nodes: { id: string; action: string }[] }
    // The sidecar reads its pipelines from the manifest folder when it starts; adding one to a
    // running engine is not available, so the package is checked but not registered.
    throw new ApiError('NotSupported', {
      msgText: 'The algorithm package is valid, but algorithms cannot be registered at run time on this device yet.',
      details: { feature: 'runtime-algorithm-registration', path: input.path, algorithmId: valid.algorithmId, nodes: valid.nodes.map((n) => n.action), validated: true },
    })
  },
})
