import { rm } from 'node:fs/promises'
import path from 'node:path'
import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import type { Capacity } from '../uploads/capacity.ts'
import type { ClipRow, RecordingStore } from './store.ts'

const DAY_MS = 24 * 60 * 60 * 1000
/** Clips deleted per step; space is measured again after each step. */
const BATCH = 20
/** A pass stops after this many steps (a database that cannot delete must not loop it). */
const MAX_STEPS = 200

export interface RetentionOptions {
  store: RecordingStore
  /** Free space as uploads account it (spec 8): after the reserve and upload reservations. */
  space(): Promise<Capacity>
  headroomBytes: number
  /** Bytes the ring segments hold now (they count against the budget). */
  ringBytes(): number
  dataPath: string
  events: Pick<EventsService, 'emit'>
  log: Logger
}

/**
 * Retention of recorded clips: by days, by the recording budget, and by the disk safety
 * reserve of spec 8 with the same accounting as uploads. Recording keeps `headroomBytes` free
 * above the reserve; whatever is short is freed by deleting the oldest footage first. Deleting
 * before the retention days are over emits `recording.footageDeleted`.
 */
export class Retention {
  constructor(private readonly options: RetentionOptions) {}

  /**
   * One pass, before `extraBytes` are written (a clip being joined; 0 for the periodic
   * check). Returns whether they may be written without going below the headroom, and the
   * space after the pass.
   */
  async enforce(now: number, extraBytes = 0): Promise<{ writable: boolean; availableBytes: number }> {
    const { store, headroomBytes } = this.options
    const { retentionDays, budgetBytes } = await store.retention()
    if (retentionDays > 0) {
      const expired = await store.endedBefore(now - retentionDays * DAY_MS, 500)
      if (expired.length > 0) {
        await this.remove(expired)
        this.options.log.info({ clips: expired.length }, 'deleted clips past their retention days')
      }
    }
    if (budgetBytes > 0) {
      const used = (await store.totals()).bytes + this.options.ringBytes() + extraBytes
      if (used > budgetBytes) await this.free('budget', async (freed) => Math.max(0, used - freed - budgetBytes))
    }
    let space = await this.options.space()
    const need = headroomBytes + extraBytes
    if (space.availableForNewUploadsBytes < need) {
      await this.free('reserve', async () => {
        space = await this.options.space()
        return Math.max(0, need - space.availableForNewUploadsBytes)
      })
    }
    return { writable: space.availableForNewUploadsBytes >= need, availableBytes: space.availableForNewUploadsBytes }
  }

  /**
   * Deletes the oldest clips until `short` (called with the bytes freed so far) answers 0:
   * each step deletes as many of the oldest as cover what is short, then asks again.
   */
  private async free(reason: 'budget' | 'reserve', short: (freedBytes: number) => Promise<number>): Promise<void> {
    const deleted: ClipRow[] = []
    let freed = 0
    for (let step = 0, missing = await short(0); step < MAX_STEPS && missing > 0; step++, missing = await short(freed)) {
      const oldest = await this.options.store.oldest(BATCH)
      if (oldest.length === 0) break
      const batch: ClipRow[] = []
      for (let i = 0, covered = 0; i < oldest.length && covered < missing; i++) {
        batch.push(oldest[i]!)
        covered += oldest[i]!.bytes
      }
      try {
        await this.remove(batch)
      } catch (error) {
        this.options.log.error({ err: (error as Error).message, reason }, 'deleting old footage failed')
        break
      }
      deleted.push(...batch)
      freed += batch.reduce((sum, c) => sum + c.bytes, 0)
    }
    if (deleted.length === 0) return
    this.options.log.warn({ reason, clips: deleted.length, bytes: freed }, 'deleted the oldest footage early for space')
    await this.options.events.emit('recording.footageDeleted', {
      reason, clips: deleted.length, bytes: freed, clipIds: deleted.slice(0, 50).map((c) => c.clipId),
      oldestStartTime: Math.min(...deleted.map((c) => c.startTime)), newestEndTime: Math.max(...deleted.map((c) => c.endTime)),
    }).catch((error: Error) => this.options.log.error({ err: error.message }, 'recording.footageDeleted not written'))
  }

  /** Files first: a row whose file is gone is harmless (ClipNotFound) and goes with the next pass. */
  private async remove(clips: ClipRow[]): Promise<void> {
    await Promise.all(clips.map((clip) => rm(path.join(this.options.dataPath, clip.file), { force: true })))
    await this.options.store.deleteClips(clips.map((c) => c.clipId))
  }
}
