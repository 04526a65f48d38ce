import { and, asc, count, desc, eq, gt, inArray, lt, sum, type SQL } from 'drizzle-orm'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../../shared/db/client.ts'
import { recordingCameras, recordingClips, systemSettings } from '../../shared/db/schema/index.ts'
import { clipUrlOf, type ClipPageInput, type ClipView } from '../../shared/recording/types.ts'

export type ClipRow = typeof recordingClips.$inferSelect
export type CameraSettingRow = typeof recordingCameras.$inferSelect

export interface Retention {
  retentionDays: number
  budgetBytes: number
}

const SETTINGS_KEY = 'recording'

export const clipView = (row: ClipRow): ClipView => ({
  clipId: row.clipId, clipUrl: clipUrlOf(row.clipId), cameraId: row.cameraId, kind: row.kind,
  eventId: row.eventId, eventKind: row.eventKind, taskId: row.taskId, objectId: row.objectId,
  startTime: row.startTime, endTime: row.endTime, durationMs: row.durationMs, bytes: row.bytes,
})

/** Recording's rows: per-camera settings, retention (a `system_settings` row over the configuration) and clips. */
export class RecordingStore {
  constructor(private readonly db: Db, private readonly config: Config, private readonly now: () => number) {}

  async retention(): Promise<Retention> {
    const [row] = await this.db.select().from(systemSettings).where(eq(systemSettings.key, SETTINGS_KEY)).limit(1)
    const stored = row ? JSON.parse(row.value) as Partial<Retention> : {}
    return { retentionDays: stored.retentionDays ?? this.config.recordRetentionDays, budgetBytes: stored.budgetBytes ?? this.config.recordBudgetBytes }
  }

  async setRetention(retention: Retention): Promise<void> {
    const values = { value: JSON.stringify(retention), updatedAt: this.now() }
    await this.db.insert(systemSettings).values({ key: SETTINGS_KEY, ...values }).onConflictDoUpdate({ target: systemSettings.key, set: values })
  }

  cameras(): Promise<CameraSettingRow[]> {
    return this.db.select().from(recordingCameras).orderBy(asc(recordingCameras.cameraId))
  }

  async setCameras(rows: CameraSettingRow[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const row of rows) await tx.insert(recordingCameras).values(row).onConflictDoUpdate({ target: recordingCameras.cameraId, set: row })
    })
  }

  async deleteCamera(cameraId: string): Promise<void> {
    await this.db.delete(recordingCameras).where(eq(recordingCameras.cameraId, cameraId))
  }

  async insertClip(row: ClipRow): Promise<void> {
    await this.db.insert(recordingClips).values(row)
  }

  async clip(clipId: string): Promise<ClipRow | undefined> {
    const [row] = await this.db.select().from(recordingClips).where(eq(recordingClips.clipId, clipId))
    return row
  }

  async totals(): Promise<{ clips: number; bytes: number }> {
    const [row] = await this.db.select({ clips: count(), bytes: sum(recordingClips.bytes) }).from(recordingClips)
    return { clips: row?.clips ?? 0, bytes: Number(row?.bytes ?? 0) }
  }

  /** The oldest clips first (the footage retention deletes first). */
  oldest(limit: number): Promise<ClipRow[]> {
    return this.db.select().from(recordingClips).orderBy(asc(recordingClips.startTime), asc(recordingClips.clipId)).limit(limit)
  }

  endedBefore(time: number, limit: number): Promise<ClipRow[]> {
    return this.db.select().from(recordingClips).where(lt(recordingClips.endTime, time)).orderBy(asc(recordingClips.startTime)).limit(limit)
  }

  all(): Promise<Pick<ClipRow, 'clipId' | 'file'>[]> {
    return this.db.select({ clipId: recordingClips.clipId, file: recordingClips.file }).from(recordingClips)
  }

  async deleteClips(clipIds: string[]): Promise<void> {
    if (clipIds.length > 0) await this.db.delete(recordingClips).where(inArray(recordingClips.clipId, clipIds))
  }

  async page(query: ClipPageInput): Promise<{ total: number; rows: ClipView[] }> {
    const filters: SQL[] = []
    if (query.cameraId) filters.push(eq(recordingClips.cameraId, query.cameraId))
    if (query.kind) filters.push(eq(recordingClips.kind, query.kind))
    if (query.eventId !== undefined) filters.push(eq(recordingClips.eventId, query.eventId))
    if (query.from !== undefined) filters.push(gt(recordingClips.endTime, query.from))
    if (query.to !== undefined) filters.push(lt(recordingClips.startTime, query.to))
    const where = filters.length > 0 ? and(...filters) : undefined
    const [total] = await this.db.select({ n: count() }).from(recordingClips).where(where)
    const rows = await this.db.select().from(recordingClips).where(where).orderBy(desc(recordingClips.startTime), desc(recordingClips.clipId))
      .limit(query.pageSize).offset((query.pageNum - 1) * query.pageSize)
    return { total: total?.n ?? 0, rows: rows.map(clipView) }
  }
}
