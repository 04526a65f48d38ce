import { eq } from 'drizzle-orm'
import type { Db } from '../../shared/db/client.ts'
import { tasks } from '../../shared/db/schema/index.ts'
import type { Logger } from '../../shared/handler.ts'
import type { InferenceService, TaskConfig } from '../../shared/inference/types.ts'

/**
 * Loads every `created` task into the sidecar at start (spec 3.2: a created task stays
 * created across a restart of the device). A task whose pipeline no longer loads stays in
 * the database; PTaskDetectPic retries the load and reports the failure.
 */
export async function restoreTasks(db: Db, inference: InferenceService, log: Logger): Promise<number> {
  const rows = await db.select().from(tasks).where(eq(tasks.state, 'created'))
  let restored = 0
  for (const row of rows) {
    try {
      await inference.load(row.taskId, row.algorithmCode, row.taskConfig as TaskConfig)
      restored++
    } catch (error) {
      log.warn({ taskId: row.taskId, algorithmCode: row.algorithmCode, err: (error as Error).message }, 'task could not be re-established')
    }
  }
  if (rows.length > 0) log.info({ restored, total: rows.length }, 'tasks re-established')
  return restored
}
