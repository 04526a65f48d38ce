import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { systemSettings } from '../../shared/db/schema/index.ts'

/** One JSON value of the System settings in `system_settings`, so it survives restarts. */
export function storedSetting<T>(db: Db, key: string, now: () => number) {
  return {
    async read(): Promise<T | null> {
      const [row] = await db.select().from(systemSettings).where(eq(systemSettings.key, key)).limit(1)
      return row ? JSON.parse(row.value) as T : null
    },
    async write(value: T): Promise<void> {
      const values = { value: JSON.stringify(value), updatedAt: now() }
      await db.insert(systemSettings).values({ key, ...values }).onConflictDoUpdate({ target: systemSettings.key, set: values })
    },
    async remove(): Promise<void> {
      await db.delete(systemSettings).where(eq(systemSettings.key, key))
    },
  }
}
