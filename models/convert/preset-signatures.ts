/**
 * The signature of every preset model, computed at build time into
 * `dist/models/preset-signatures.json`: each model file a shipped manifest names (converted
 * models and package files), with its size, modification time, SHA-256 and ONNX signature.
 * A device registering its preset models on a new database (runtime/models/presets.ts) takes
 * them from here for a file that is still the same size and age, instead of hashing it and
 * opening it in onnxruntime at every first start.
 */
import { createHash } from 'node:crypto'
import { createReadStream, existsSync, statSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { inspectOnnx } from '../../shared/models/onnx.ts'
import { PRESET_SIGNATURES_FILE, type PresetSignatures } from '../../shared/models/preset-signatures.ts'
import { loadManifests } from '../load-manifests.ts'

const sha256File = (file: string) => new Promise<string>((resolve, reject) => {
  const hash = createHash('sha256')
  createReadStream(file).on('data', (chunk) => hash.update(chunk)).once('error', reject).once('end', () => resolve(hash.digest('hex')))
})

export async function writePresetSignatures({ root, dist }: { root: string; dist: string }): Promise<number> {
  const signatures: PresetSignatures = {}
  for (const { manifest, modelPaths } of loadManifests(join(root, 'models/manifests'), root).values()) {
    for (const [modelId, entry] of Object.entries(manifest.models)) {
      if ('uploaded' in entry.source) continue
      const file = modelPaths[modelId]!
      const key = relative(root, file)
      if (signatures[key] || !existsSync(file)) continue
      const { size, mtimeMs } = statSync(file)
      // A model that does not open is left out: the device then reports it as it does today.
      const signature = await inspectOnnx(file).catch(() => null)
      if (signature) signatures[key] = { size, mtimeMs, sha256: await sha256File(file), signature }
    }
  }
  await writeFile(join(dist, PRESET_SIGNATURES_FILE), `${JSON.stringify(signatures, null, 1)}\n`)
  return Object.keys(signatures).length
}
