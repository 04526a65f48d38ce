/**
 * The export policy of an algorithm (spec 7.1 DefaultCantBeExport): which files leave the
 * device with its manifest. An operator's uploaded model leaves only when it is registered,
 * not encrypted, not device-bound and marked exportable; shipped model files stay.
 */
import { stat } from 'node:fs/promises'
import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { models } from '../../shared/db/schema/index.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { AlgorithmEntry, AlgorithmPackage, PackageFileEntry } from '../../shared/algorithms/types.ts'
import type { LoadedManifest } from '../../models/load-manifests.ts'

export async function exportAlgorithmPackage(db: Db, entry: AlgorithmEntry, loaded: LoadedManifest): Promise<AlgorithmPackage> {
  const algorithmId = entry.manifest.algorithmId
  const manifest = structuredClone(entry.manifest)
  const files: PackageFileEntry[] = []
  const include = async (name: string, file: string) => {
    const size = await stat(file).then((s) => s.size, () => { throw new ApiError('ModelFileMissing', { details: { algorithmId, file: name } }) })
    files.push({ name, path: file, size })
  }
  for (const [key, model] of Object.entries(manifest.models)) {
    const source = model.source
    if ('uploaded' in source) {
      // spec 7.1 DefaultCantBeExport: an operator's model leaves only when it is marked exportable.
      const [row] = await db.select().from(models).where(eq(models.modelId, source.uploaded))
      const reason = !row ? 'not-registered' : row.encrypted ? 'encrypted' : row.deviceBound ? 'device-bound' : !row.exportable ? 'not-exportable' : null
      if (reason === 'not-registered') throw new ApiError('ModelFileMissing', { details: { algorithmId, modelId: source.uploaded } })
      if (reason) throw new ApiError('DefaultCantBeExport', { details: { algorithmId, modelId: source.uploaded, reason } })
      const name = `models/${key}.onnx`
      await include(name, loaded.modelPaths[key]!)
      model.source = { path: name }
    } else if ('path' in source) {
      await include(source.path, loaded.modelPaths[key]!)
    }
    // Shipped model files (npm package, build output) stay: every device of this product has them.
  }
  for (const node of manifest.nodes)
    if (node.action === 'classifier' && node.head.kind === 'ctc' && 'path' in node.head.keys) await include(node.head.keys.path, loaded.keyPaths[node.id]!)
  return { algorithmId, manifest, files }
}
