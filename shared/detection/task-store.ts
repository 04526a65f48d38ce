import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { tasks } from '../db/schema/index.ts'

export type TaskRow = typeof tasks.$inferSelect

export async function findTask(db: Db, taskId: string): Promise<TaskRow | undefined> {
  const [row] = await db.select().from(tasks).where(eq(tasks.taskId, taskId)).limit(1)
  return row
}

/** spec 3.2: the task is `created` (new, reused, or created again after a cancel). */
export async function saveCreatedTask(db: Db, row: { taskId: string; algorithmCode: string; taskConfig: Record<string, unknown>; createdBy: string | null }, now: number) {
  const values = { ...row, state: 'created' as const, createdAt: now, updatedAt: now }
  await db.insert(tasks).values(values).onConflictDoUpdate({
    target: tasks.taskId,
    set: { algorithmCode: row.algorithmCode, taskConfig: row.taskConfig, state: 'created', updatedAt: now },
  })
}

export async function markCancelled(db: Db, taskId: string, now: number) {
  await db.update(tasks).set({ state: 'cancelled', updatedAt: now }).where(eq(tasks.taskId, taskId))
}
