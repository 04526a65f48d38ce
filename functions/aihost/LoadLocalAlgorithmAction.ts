import { realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import { algorithmRow } from '../../shared/algorithms/view.ts'

/** Algorithm packages an operator placed on the device: `<DATA_DIR>/algorithms/<name>/manifest.json`. */
const algorithmsDir = (dataPath: string) => path.join(dataPath, 'algorithms')

export default defineHandler({
  routes: ['/v1/cwai/aihost/LoadLocalAlgorithmAction'],
  auth: 'session',
  body: 'json',
  summary: 'Installs an algorithm package folder already on the device (DATA_DIR/algorithms/<path>, confined there); usable by PTaskCreate at once.',
  input: Type.Object({
    // A folder name (or name/name) inside the algorithm folder: no absolute path, no `..`.
    path: Type.String({ pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}(/[A-Za-z0-9_][A-Za-z0-9._-]{0,63}){0,3}$' }),
    // Overwrite an algorithm with the same id (refused while tasks use it).
    replace: Type.Optional(Type.Boolean({ default: false })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const base = algorithmsDir(ctx.config.dataPath)
    let folder: string
    try {
      const [realBase, realFolder] = await Promise.all([realpath(base), realpath(path.join(base, input.path))])
      // Links may not lead out of the algorithm folder.
      if (!realFolder.startsWith(realBase + path.sep) || !(await stat(path.join(realFolder, 'manifest.json'))).isFile()) throw new Error('outside')
      folder = realFolder
    } catch {
      throw invalidParam('/path', 'no manifest.json in that folder of the algorithm directory', { folder: 'algorithms' })
    }
    const entry = await ctx.algorithms.installFolder(folder, { replace: input.replace ?? false })
    ctx.log.info({ path: input.path, algorithmId: entry.manifest.algorithmId }, 'local algorithm package installed')
    return algorithmRow(entry)
  },
})
