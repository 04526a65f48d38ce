import type { Db } from '../db/client.ts'
import type { Logger } from '../../shared/handler.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import type { SidecarClient } from '../inference/client.ts'
import { createdTasks } from './store.ts'

/**
 * Hands every `created` task to the sidecar client at start (spec 3.2: a created task stays
 * created across a restart of the device); the client loads them as soon as the sidecar
 * runs, and again after each sidecar restart. A task whose pipeline no longer loads stays in
 * the database; PTaskDetectPic retries the load and reports the failure.
 */
export async function restoreTasks(db: Db, inference: Pick<SidecarClient, 'adopt'>, log: Logger): Promise<number> {
  const rows = await createdTasks(db)
  let restored = 0
  for (const row of rows) {
    try {
      await inference.adopt(row.taskId, row.algorithmCode, row.taskConfig as TaskConfig)
      restored++
    } catch (error) {
      log.warn({ taskId: row.taskId, algorithmCode: row.algorithmCode, err: (error as Error).message }, 'task could not be re-established')
    }
  }
  if (rows.length > 0) log.info({ restored, total: rows.length }, 'tasks re-established')
  return restored
}
