import { and, asc, eq, inArray } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { tasks } from '../../shared/db/schema/tasks.ts'
import type { AlgorithmRegistry } from '../../shared/algorithms/types.ts'

export interface ModelUsage {
  /** Algorithms whose manifest names the model (`{"uploaded": "<modelId>"}`). */
  algorithmIds: string[]
  /** Created tasks (stored, not cancelled) that run one of those algorithms. */
  taskIds: string[]
}

/**
 * Who uses a user model, from the records rather than the sidecar's open sessions, so the
 * answer is the same while the sidecar restarts or before a task has loaded its pipeline.
 */
export async function modelUsage(db: Db, algorithms: AlgorithmRegistry, modelId: string): Promise<ModelUsage> {
  const algorithmIds = algorithms.list()
    .filter((entry) => Object.values(entry.manifest.models).some((model) => 'uploaded' in model.source && model.source.uploaded === modelId))
    .map((entry) => entry.manifest.algorithmId)
    .sort()
  if (algorithmIds.length === 0) return { algorithmIds, taskIds: [] }
  const using = await db.select({ taskId: tasks.taskId }).from(tasks)
    .where(and(inArray(tasks.algorithmCode, algorithmIds), eq(tasks.state, 'created')))
    .orderBy(asc(tasks.taskId))
  return { algorithmIds, taskIds: using.map((t) => t.taskId) }
}
