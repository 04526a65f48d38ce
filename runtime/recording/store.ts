import { and, asc, count, desc, eq, gt, inArray, lt, or, sum, type SQL } from 'drizzle-orm'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../db/client.ts'
import { recordingCameras, recordingClipEvents, recordingClips, systemSettings } from '../../shared/db/schema/index.ts'
import { clipUrlOf, type ClipPageInput, type ClipView } from '../../shared/recording/types.ts'

export type ClipRow = typeof recordingClips.$inferSelect
export type CameraSettingRow = typeof recordingCameras.$inferSelect
export type ClipEventRow = typeof recordingClipEvents.$inferSelect

export interface Retention {
  retentionDays: number
  budgetBytes: number
}

const SETTINGS_KEY = 'recording'

export const clipView = (row: ClipRow, links: ClipEventRow[] = []): ClipView => ({
  clipId: row.clipId, clipUrl: clipUrlOf(row.clipId), cameraId: row.cameraId, kind: row.kind,
  eventId: row.eventId, eventKind: row.eventKind,
  // Clips written before clips had their events listed have only their own event.
  events: links.length > 0 ? links.map((l) => ({ eventId: l.eventId, eventKind: l.eventKind })) : row.eventKind ? [{ eventId: row.eventId, eventKind: row.eventKind }] : [],
  taskId: row.taskId, objectId: row.objectId,
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

  /** A clip and the events it belongs to, in one transaction (a full disk leaves neither). */
  async insertClip(row: ClipRow, links: ClipEventRow[] = []): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.insert(recordingClips).values(row)
      if (links.length > 0) await tx.insert(recordingClipEvents).values(links)
    })
  }

  /** The clip of this id, or of an alarm's promised URL merged into it (recordingClipEvents.promisedId). */
  async clip(clipId: string): Promise<{ row: ClipRow; links: ClipEventRow[] } | undefined> {
    let [row] = await this.db.select().from(recordingClips).where(eq(recordingClips.clipId, clipId))
    if (!row) {
      const [link] = await this.db.select().from(recordingClipEvents).where(eq(recordingClipEvents.promisedId, clipId)).limit(1)
      if (link) [row] = await this.db.select().from(recordingClips).where(eq(recordingClips.clipId, link.clipId))
    }
    return row ? { row, links: await this.links([row.clipId]).then((m) => m.get(row!.clipId) ?? []) } : undefined
  }

  private async links(clipIds: string[]): Promise<Map<string, ClipEventRow[]>> {
    const map = new Map<string, ClipEventRow[]>()
    if (clipIds.length === 0) return map
    for (const link of await this.db.select().from(recordingClipEvents).where(inArray(recordingClipEvents.clipId, clipIds)).orderBy(asc(recordingClipEvents.eventId))) {
      const list = map.get(link.clipId) ?? []
      list.push(link)
      map.set(link.clipId, list)
    }
    return map
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
    if (clipIds.length === 0) return
    await this.db.transaction(async (tx) => {
      await tx.delete(recordingClipEvents).where(inArray(recordingClipEvents.clipId, clipIds))
      await tx.delete(recordingClips).where(inArray(recordingClips.clipId, clipIds))
    })
  }

  async page(query: ClipPageInput): Promise<{ total: number; rows: ClipView[] }> {
    const filters: SQL[] = []
    if (query.cameraId) filters.push(eq(recordingClips.cameraId, query.cameraId))
    if (query.kind) filters.push(eq(recordingClips.kind, query.kind))
    // Any of the clip's events: one object's visit and its alarms share a clip.
    if (query.eventId !== undefined) {
      filters.push(or(eq(recordingClips.eventId, query.eventId),
        inArray(recordingClips.clipId, this.db.select({ clipId: recordingClipEvents.clipId }).from(recordingClipEvents).where(eq(recordingClipEvents.eventId, query.eventId))))!)
    }
    if (query.from !== undefined) filters.push(gt(recordingClips.endTime, query.from))
    if (query.to !== undefined) filters.push(lt(recordingClips.startTime, query.to))
    const where = filters.length > 0 ? and(...filters) : undefined
    const [total] = await this.db.select({ n: count() }).from(recordingClips).where(where)
    const rows = await this.db.select().from(recordingClips).where(where).orderBy(desc(recordingClips.startTime), desc(recordingClips.clipId))
      .limit(query.pageSize).offset((query.pageNum - 1) * query.pageSize)
    const links = await this.links(rows.map((r) => r.clipId))
    return { total: total?.n ?? 0, rows: rows.map((r) => clipView(r, links.get(r.clipId))) }
  }
}
