import { and, count, eq, getTableColumns, inArray, isNull, lte, or, sql } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { uploadChunks, uploadSessions } from '../../shared/db/schema/uploads.ts'
import type { UploadState } from '../../shared/uploads/index.ts'

export type UploadSessionRow = typeof uploadSessions.$inferSelect
export type NewUploadSession = typeof uploadSessions.$inferInsert

const LIVE: UploadState[] = ['open', 'complete']

/**
 * Manifest queries of the upload service (spec 2.5, 3.1). Every write of a session's `state`
 * (insert, commitChunk, recordTusProgress, end, unclaim) is guarded by the expected state and
 * is called only by session-states.ts, which takes the states from the transition table.
 */
export class UploadRepository {
  // The queries of every upload and claim are built once: drizzle spends more building a query
  // than the embedded database spends running it.
  private readonly byId
  private readonly liveByRequest
  private readonly liveTotals
  private readonly insertRow
  private readonly bytesDeleted
  private readonly endFrom = new Map<string, ReturnType<UploadRepository['prepareEnd']>>()

  constructor(private readonly db: Db) {
    const placeholder = sql.placeholder
    this.byId = db.select().from(uploadSessions).where(eq(uploadSessions.id, placeholder('id'))).limit(1).prepare()
    this.liveByRequest = db.select().from(uploadSessions).where(and(
      eq(uploadSessions.userId, placeholder('userId')),
      eq(uploadSessions.clientRequestId, placeholder('clientRequestId')),
      inArray(uploadSessions.state, LIVE),
    )).limit(1).prepare()
    this.liveTotals = db.select({
      reserved: sql<number>`coalesce(sum(case when ${uploadSessions.state} = 'open' then ${uploadSessions.totalSize} - ${uploadSessions.receivedBytes} else 0 end), 0)`,
      active: sql<number>`count(*)`,
    }).from(uploadSessions).where(inArray(uploadSessions.state, LIVE)).prepare()
    const columns = Object.keys(getTableColumns(uploadSessions)) as (keyof NewUploadSession)[]
    this.insertRow = db.insert(uploadSessions).values(Object.fromEntries(columns.map((key) => [key, placeholder(key)])) as never).prepare()
    this.bytesDeleted = db.update(uploadSessions).set({ bytesDeletedAt: placeholder('now') as never })
      .where(eq(uploadSessions.id, placeholder('id'))).prepare()
  }

  async find(id: string): Promise<UploadSessionRow | undefined> {
    return this.byId.get({ id })
  }

  /** The caller's live session for a clientRequestId (spec 4.12 resume). */
  async findLiveByRequest(userId: string, clientRequestId: string): Promise<UploadSessionRow | undefined> {
    return this.liveByRequest.get({ userId, clientRequestId })
  }

  async insert(row: UploadSessionRow): Promise<void> {
    await this.insertRow.run(row)
  }

  async deleteSession(id: string): Promise<void> {
    await this.db.batch([
      this.db.delete(uploadChunks).where(eq(uploadChunks.uploadId, id)),
      this.db.delete(uploadSessions).where(eq(uploadSessions.id, id)),
    ])
  }

  /** Where an accepted chunk lies in the session's file. */
  async chunk(id: string, chunkIndex: number): Promise<{ offset: number; size: number } | undefined> {
    return (await this.db.select({ offset: uploadChunks.offset, size: uploadChunks.size }).from(uploadChunks)
      .where(and(eq(uploadChunks.uploadId, id), eq(uploadChunks.chunkIndex, chunkIndex))).limit(1))[0]
  }

  /**
   * Records an accepted chunk and advances the session, only if the session is still open at
   * the expected position. Returns false when it moved meanwhile (cancelled, expired).
   */
  async commitChunk(session: UploadSessionRow, size: number, now: number, to: UploadState): Promise<boolean> {
    const [, update] = await this.db.batch([
      this.db.insert(uploadChunks).values({ uploadId: session.id, chunkIndex: session.nextChunkIndex, offset: session.receivedBytes, size })
        .onConflictDoNothing(),
      this.db.update(uploadSessions).set({
        nextChunkIndex: session.nextChunkIndex + 1,
        receivedBytes: session.receivedBytes + size,
        lastActivityAt: now,
        state: to,
      }).where(and(eq(uploadSessions.id, session.id), eq(uploadSessions.state, 'open'),
        eq(uploadSessions.nextChunkIndex, session.nextChunkIndex))),
    ])
    if (update.rowsAffected === 1) return true
    await this.db.delete(uploadChunks).where(and(eq(uploadChunks.uploadId, session.id), eq(uploadChunks.chunkIndex, session.nextChunkIndex)))
    return false
  }

  /** Native tus progress: the store's offset is the truth; the manifest mirrors it. */
  async recordTusProgress(id: string, receivedBytes: number, to: UploadState, now: number): Promise<void> {
    await this.db.update(uploadSessions).set({
      receivedBytes, lastActivityAt: now, state: to, ...(to === 'complete' ? { nextChunkIndex: 1 } : {}),
    }).where(and(eq(uploadSessions.id, id), eq(uploadSessions.state, 'open'), eq(uploadSessions.source, 'tus')))
  }

  /** Moves a session from one of `from` to a terminal state; false when it was not in `from`. */
  async end(id: string, from: UploadState[], to: UploadState, now: number, reason?: string): Promise<boolean> {
    const key = from.join()
    let update = this.endFrom.get(key)
    if (!update) this.endFrom.set(key, update = this.prepareEnd(from))
    const result = await update.run({ id, to, now, reason: reason ?? null })
    return result.rowsAffected === 1
  }

  private prepareEnd(from: UploadState[]) {
    const placeholder = sql.placeholder
    return this.db.update(uploadSessions).set({ state: placeholder('to') as never, endedAt: placeholder('now') as never, endReason: placeholder('reason') as never })
      .where(and(eq(uploadSessions.id, placeholder('id')), inArray(uploadSessions.state, from))).prepare()
  }

  /** Undoes a claim whose consumer failed: `from` (bytes still there) → `to`. */
  async unclaim(id: string, from: UploadState[], to: UploadState): Promise<boolean> {
    const result = await this.db.update(uploadSessions).set({ state: to, endedAt: null, endReason: null })
      .where(and(eq(uploadSessions.id, id), inArray(uploadSessions.state, from), isNull(uploadSessions.bytesDeletedAt)))
    return result.rowsAffected === 1
  }

  /**
   * In-flight reservations: bytes admitted but not yet written by open sessions (bytes already
   * written show up in the filesystem's free space), and the number of live sessions.
   */
  async reservations(): Promise<{ reservedBytes: number; activeSessions: number }> {
    const row = await this.liveTotals.get()
    return { reservedBytes: Number(row?.reserved ?? 0), activeSessions: Number(row?.active ?? 0) }
  }

  /**
   * Sessions past a deadline of runtime/uploads/expiry.ts (0 = that rule off): open ones idle
   * for `idleMs`, open or complete ones older than `absoluteMs`. Only those rows are read, so
   * admission and the sweeper cost the same however many complete uploads wait unclaimed.
   */
  async listDue(now: number, idleMs: number, absoluteMs: number): Promise<UploadSessionRow[]> {
    const due = [
      idleMs > 0 ? and(eq(uploadSessions.state, 'open'), lte(uploadSessions.lastActivityAt, now - idleMs)) : undefined,
      absoluteMs > 0 ? and(inArray(uploadSessions.state, LIVE), lte(uploadSessions.createdAt, now - absoluteMs)) : undefined,
    ].filter((condition) => condition !== undefined)
    if (due.length === 0) return []
    return this.db.select().from(uploadSessions).where(or(...due))
  }

  /** Every live (open or complete) session. */
  async listLive(): Promise<UploadSessionRow[]> {
    return this.db.select().from(uploadSessions).where(inArray(uploadSessions.state, LIVE))
  }

  async markBytesDeleted(id: string, now: number): Promise<void> {
    await this.bytesDeleted.run({ id, now })
  }

  /** How many sessions the database holds in each state of spec 3.1, every state listed (metrics, read at scrape time). */
  async sessionsByState(): Promise<Record<UploadState, number>> {
    const counts: Record<UploadState, number> = { open: 0, complete: 0, consumed: 0, cancelled: 0, expired: 0, failed: 0 }
    for (const { state, count } of await this.countByState()) if (state in counts) counts[state as UploadState] = count
    return counts
  }

  /** Sessions per state. */
  async countByState(): Promise<{ state: string; count: number }[]> {
    return this.db.select({ state: uploadSessions.state, count: count() }).from(uploadSessions).groupBy(uploadSessions.state)
  }

  /** Ended sessions whose bytes may still be on disk. */
  async endedWithBytes(): Promise<UploadSessionRow[]> {
    return this.db.select().from(uploadSessions).where(and(
      inArray(uploadSessions.state, ['consumed', 'cancelled', 'expired', 'failed']), isNull(uploadSessions.bytesDeletedAt)))
  }
}
