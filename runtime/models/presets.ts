import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { eq } from 'drizzle-orm'
import type { Db } from '../../shared/db/client.ts'
import { models } from '../../shared/db/schema/models.ts'
import type { Logger } from '../../shared/handler.ts'
import { inspectOnnx } from '../../shared/models/onnx.ts'
import { sha256File } from '../../shared/models/register.ts'
import type { ModelSettings } from '../../shared/models/types.ts'

/** The parts of a pipeline manifest (models/manifest-schema.ts) that name its models. */
interface ManifestModels {
  algorithmId: string
  models?: Record<string, { source: { package?: string; file?: string; build?: string; uploaded?: string }; format: string }>
  nodes?: { model?: string; input?: { width?: number; height?: number; normalization?: { mean: number[]; std: number[] } }; labels?: string[]; head?: { labels?: string[] } }[]
}

/** A file inside an installed package; never outside its folder. */
function packageFile(projectRoot: string, pkg: string, file: string): string | null {
  const base = path.join(projectRoot, 'node_modules', pkg)
  const full = path.resolve(base, file)
  return full.startsWith(base + path.sep) && existsSync(full) ? full : null
}

const existingFile = (file: string) => (existsSync(file) ? file : null)

/**
 * Preset models are the ones the shipped pipelines use (spec 4.11: never exportable). At
 * start every model named by a manifest is registered (or refreshed) as a `preset` row.
 */
export async function registerPresetModels(db: Db, manifestsDir: string, projectRoot: string, now: number, log: Logger): Promise<number> {
  if (!existsSync(manifestsDir)) return 0
  const usage = new Map<string, { file: string; format: string; usedBy: Set<string>; settings: ModelSettings; name: string }>()
  for (const name of readdirSync(manifestsDir).filter((n) => n.endsWith('.json')).sort()) {
    let manifest: ManifestModels
    try {
      manifest = JSON.parse(readFileSync(path.join(manifestsDir, name), 'utf8'))
    } catch (error) {
      log.warn({ err: error, manifest: name }, 'pipeline manifest unreadable; its models are not registered')
      continue
    }
    for (const [modelId, entry] of Object.entries(manifest.models ?? {})) {
      // Operator uploads are user models, not presets; build outputs (models/convert) live in dist/models.
      if (entry.source.uploaded) continue
      const file = entry.source.build
        ? existingFile(path.join(projectRoot, 'dist', 'models', `${entry.source.build}.onnx`))
        : packageFile(projectRoot, entry.source.package ?? '', entry.source.file ?? '')
      if (!file) {
        log.warn({ modelId, source: entry.source }, 'preset model file not installed')
        continue
      }
      const node = manifest.nodes?.find((n) => n.model === modelId)
      const known = usage.get(modelId)
      if (known) {
        known.usedBy.add(manifest.algorithmId)
        continue
      }
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
  for (const [modelId, preset] of usage) {
    const sha256 = await sha256File(preset.file)
    const [existing] = await db.select().from(models).where(eq(models.modelId, modelId))
    if (existing && existing.source === 'user') {
      log.warn({ modelId }, 'a user model has the id of a preset model; preset not registered')
      continue
    }
    let signature = existing?.sha256 === sha256 ? existing.signature : null
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
      sizeBytes: statSync(preset.file).size,
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
