import { count, desc, eq, sql } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { tasks } from '../../shared/db/schema/index.ts'
import type { TaskConfig, TaskRow } from '../../shared/tasks/types.ts'

/**
 * The `tasks` table: one row per client task id, in the states of spec 3.2. The writes
 * (saveCreatedTask, markCancelled) are called only by the task service, after the move was
 * checked against the transition table (transitions.ts).
 */

const prepareFindTask = (db: Db) => db.select().from(tasks).where(eq(tasks.taskId, sql.placeholder('taskId'))).limit(1).prepare()
/** Read on every detection (twice: before the image is fetched, and under the task's lock): built once per database. */
const findTaskQueries = new WeakMap<Db, ReturnType<typeof prepareFindTask>>()

export async function findTask(db: Db, taskId: string): Promise<TaskRow | undefined> {
  let query = findTaskQueries.get(db)
  if (!query) findTaskQueries.set(db, query = prepareFindTask(db))
  return query.get({ taskId })
}

/** spec 3.2: the task is saved in `state` (created: new, reused, or created again after a cancel). */
export async function saveCreatedTask(db: Db, row: { taskId: string; algorithmCode: string; taskConfig: TaskConfig; createdBy: string | null; state?: TaskRow['state'] }, now: number) {
  const values = { ...row, state: row.state ?? 'created', createdAt: now, updatedAt: now }
  await db.insert(tasks).values(values).onConflictDoUpdate({
    target: tasks.taskId,
    set: { algorithmCode: row.algorithmCode, taskConfig: row.taskConfig, state: values.state, updatedAt: now },
  })
}

export async function markCancelled(db: Db, taskId: string, now: number, state: TaskRow['state']) {
  await db.update(tasks).set({ state, updatedAt: now }).where(eq(tasks.taskId, taskId))
}

export async function createdTasks(db: Db): Promise<TaskRow[]> {
  return db.select().from(tasks).where(eq(tasks.state, 'created'))
}

/** One page of tasks in a state, most recently changed first. */
export async function listTasks(db: Db, query: { state: TaskRow['state']; offset: number; limit: number }): Promise<{ total: number; rows: TaskRow[] }> {
  const where = eq(tasks.state, query.state)
  const rows = await db.select().from(tasks).where(where).orderBy(desc(tasks.updatedAt), tasks.taskId).limit(query.limit).offset(query.offset)
  const [total] = await db.select({ n: count() }).from(tasks).where(where)
  return { total: total?.n ?? 0, rows }
}
