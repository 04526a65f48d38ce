import { eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { systemSettings } from '../../shared/db/schema/index.ts'

/** JSON values of the network area in `system_settings`, so they survive restarts. */
export class NetworkStore {
  constructor(private readonly db: Db, private readonly now: () => number) {}

  async get<T>(key: string): Promise<T | null> {
    const [row] = await this.db.select().from(systemSettings).where(eq(systemSettings.key, key)).limit(1)
    return row ? JSON.parse(row.value) as T : null
  }

  async set(key: string, value: unknown): Promise<void> {
    const values = { value: JSON.stringify(value), updatedAt: this.now() }
    await this.db.insert(systemSettings).values({ key, ...values }).onConflictDoUpdate({ target: systemSettings.key, set: values })
  }

  async delete(key: string): Promise<void> {
    await this.db.delete(systemSettings).where(eq(systemSettings.key, key))
  }
}
