import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { models } from '../../shared/db/schema/models.ts'
import type { Logger } from '../../shared/handler.ts'
import { inspectOnnx } from '../../shared/models/onnx.ts'
import { sha256File } from '../digest.ts'
import { PRESET_SIGNATURES_FILE, type PresetSignatures } from '../../shared/models/preset-signatures.ts'
import type { ModelSettings } from '../../shared/models/types.ts'
import type { LoadedManifest } from '../../models/load-manifests.ts'
import { distDir, projectRoot } from '../paths.ts'

/** What the build recorded of the preset model files; none when this build has no such file. */
function buildSignatures(): PresetSignatures {
  try {
    return JSON.parse(readFileSync(path.join(distDir, PRESET_SIGNATURES_FILE), 'utf8')) as PresetSignatures
  } catch {
    return {}
  }
}

/**
 * Preset models are the ones the shipped pipelines use (spec 4.11: never exportable). At
 * start every model named by a shipped manifest (already validated and resolved by the
 * algorithm registry) is registered (or refreshed) as a `preset` row.
 */
export async function registerPresetModels(db: Db, shipped: Iterable<LoadedManifest>, now: number, log: Logger): Promise<number> {
  const usage = new Map<string, { file: string; format: string; usedBy: Set<string>; settings: ModelSettings; name: string }>()
  for (const { manifest, modelPaths } of shipped) {
    for (const [modelId, entry] of Object.entries(manifest.models)) {
      // Operator uploads are user models, not presets.
      if ('uploaded' in entry.source) continue
      const file = modelPaths[modelId]!
      // Build outputs (models/convert) exist after `node build.mjs`; package files are checked at load.
      if (!existsSync(file)) {
        log.warn({ modelId, source: entry.source }, 'preset model file not installed')
        continue
      }
      const known = usage.get(modelId)
      if (known) {
        known.usedBy.add(manifest.algorithmId)
        continue
      }
      const node = manifest.nodes.find((n) => 'model' in n && n.model === modelId) as
        | { input?: { width?: number; height?: number; normalization?: { mean: number[]; std: number[] } }; labels?: string[]; head?: { labels?: string[] } }
        | undefined
      usage.set(modelId, {
        file,
        format: entry.format,
        name: path.basename(file),
        usedBy: new Set([manifest.algorithmId]),
        settings: {
          inputWidth: node?.input?.width ?? null,
          inputHeight: node?.input?.height ?? null,
          normalization: node?.input?.normalization ?? null,
          labels: node?.labels ?? node?.head?.labels ?? [],
        },
      })
    }
  }
  const built = buildSignatures()
  for (const [modelId, preset] of usage) {
    // The build's record holds while the file is the one it read (same size and age).
    const { size, mtimeMs } = statSync(preset.file)
    const recorded = built[path.relative(projectRoot, preset.file)]
    const known = recorded && recorded.size === size && recorded.mtimeMs === mtimeMs ? recorded : null
    const sha256 = known?.sha256 ?? await sha256File(preset.file)
    const [existing] = await db.select().from(models).where(eq(models.modelId, modelId))
    if (existing && existing.source === 'user') {
      log.warn({ modelId }, 'a user model has the id of a preset model; preset not registered')
      continue
    }
    let signature = existing?.sha256 === sha256 ? existing.signature : known ? JSON.stringify(known.signature) : null
    if (signature === null) {
      try {
        signature = JSON.stringify(await inspectOnnx(preset.file))
      } catch (error) {
        // The pipeline will fail to load it too (TaskCreateFailed); the registry stays usable.
        log.warn({ modelId, file: preset.file, err: error }, 'preset model does not open as ONNX; not registered')
        continue
      }
    }
    const row = {
      modelId,
      modelName: preset.name,
      source: 'preset' as const,
      format: preset.format,
      location: preset.file,
      originalFilename: preset.name,
      sizeBytes: size,
      sha256,
      signature,
      settings: JSON.stringify(preset.settings),
      // spec 4.11: preset models are never exportable.
      exportable: false,
      encrypted: false,
      deviceBound: false,
      usedBy: JSON.stringify([...preset.usedBy].sort()),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    }
    if (existing) await db.update(models).set(row).where(eq(models.modelId, modelId))
    else await db.insert(models).values(row)
  }
  return usage.size
}
