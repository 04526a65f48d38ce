import { notInArray, eq } from 'drizzle-orm'
import type { Db } from '../../shared/db/client.ts'
import { algorithms } from '../../shared/db/schema/index.ts'
import { defaultManifestDir, describeModelSource, loadManifests } from '../../models/load-manifests.ts'

/**
 * Seeds the algorithm registry (spec 2.3) from the pipeline manifests: one row per
 * manifest, updated when the manifest changes; rows of manifests that are gone are removed.
 * Returns the algorithm ids offered.
 */
export async function seedAlgorithms(db: Db, projectRoot: string, now: number, manifestDir: string = defaultManifestDir(projectRoot)): Promise<string[]> {
  const manifests = loadManifests(manifestDir, projectRoot)
  for (const { manifest: m } of manifests.values()) {
    const row = {
      algorithmId: m.algorithmId,
      algorithmName: m.algorithmName,
      algorithmUsage: m.algorithmUsage,
      algorithmCategory: m.algorithmCategory,
      supplier: m.supplier,
      version: m.version,
      description: m.description,
      models: Object.entries(m.models).map(([modelId, e]) => ({ modelId, ...describeModelSource(e.source), format: e.format })),
      runningStatus: 0,
      source: 'manifest',
      updatedAt: now,
    }
    await db.insert(algorithms).values(row).onConflictDoUpdate({ target: algorithms.algorithmId, set: row })
  }
  const ids = [...manifests.keys()]
  await db.delete(algorithms).where(ids.length > 0 ? notInArray(algorithms.algorithmId, ids) : eq(algorithms.source, 'manifest'))
  return ids
}
