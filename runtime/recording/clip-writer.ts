import { randomUUID } from 'node:crypto'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import type { KeyedMutex } from '../keyed-mutex.ts'
import { clipUrlOf } from '../../shared/recording/types.ts'
import { joinSegments } from './join.ts'
import type { PromisedClips } from './promised-clips.ts'
import type { ClipJob } from './recorder.ts'
import type { Retention } from './retention.ts'
import type { RecordingStore } from './store.ts'

/** A promised clip is waited for this long past the recorder's own grace (clips are joined one at a time). */
export const WRITE_MARGIN_MS = 60_000

export interface ClipWriterOptions {
  store: RecordingStore
  retention: Retention
  promised: PromisedClips
  /** The recording's one-at-a-time work: clips are written under its `clips` key, one at a time across cameras. */
  writes: KeyedMutex
  events: EventsService
  log: Logger
  /** The ffmpeg binary that joins the segments. */
  binary: string
  dataPath: string
}

/**
 * Writes the clips the camera recorders cut (docs/recording-and-live-view.md): one at a time
 * across cameras, each after a retention pass that makes room for it (a clip that cannot get
 * room is skipped), joined from its segments, recorded with its events and announced
 * (`recording.clipReady`).
 */
export class ClipWriter {
  constructor(private readonly options: ClipWriterOptions) {}

  /** Joins a clip once retention made room for it, records it and announces it (recording.clipReady). */
  write(job: ClipJob): Promise<void> {
    const { promised, writes, retention, store, events, log, binary, dataPath } = this.options
    // Promised URLs stay "not ready" while the clip waits its turn to be joined (a merged clip can end long after its alarm).
    for (const id of [job.clipId, ...job.aliases]) if (id) promised.promise(id, Date.now() + 1000, Date.now() + WRITE_MARGIN_MS)
    return writes.run('clips', async () => {
      const bytes = job.segments.reduce((sum, s) => sum + s.bytes, 0)
      const { writable, availableBytes } = await retention.enforce(Date.now(), bytes)
      if (!writable) {
        log.warn({ cameraId: job.cameraId, bytes, availableBytes }, 'no room above the disk reserve for a clip; skipped')
        return
      }
      const clipId = job.clipId ?? randomUUID()
      const file = path.join('recordings', job.cameraId, `${clipId}.mp4`)
      const target = path.join(dataPath, file)
      log.debug({ clipId, segments: job.segments.map((s) => [path.basename(s.file), Math.round(s.wallStart), Math.round(s.wallEnd)]) }, 'joining a clip')
      const size = await joinSegments(binary, job.segments.map((s) => s.file), target)
      const row = {
        clipId, cameraId: job.cameraId, kind: job.kind, eventId: job.event?.id ?? null, eventKind: job.event?.kind ?? null,
        taskId: job.event?.taskId ?? null, objectId: job.event?.objectId ?? null,
        startTime: Math.round(job.segments[0]!.wallStart), endTime: Math.round(job.segments.at(-1)!.wallEnd),
        durationMs: Math.round(job.segments.reduce((sum, s) => sum + s.wallEnd - s.wallStart, 0)), bytes: size, file, createdAt: Date.now(),
      }
      const links = job.events.map((e) => ({ clipId, eventId: e.id, eventKind: e.kind, promisedId: e.promisedId ?? null }))
      try {
        await store.insertClip(row, links)
      } catch (error) {
        // A full disk can refuse the row (SQLITE_FULL): the clip goes, the database stays as it was.
        await rm(target, { force: true })
        throw error
      }
      // A follow-up per originating event (one for a continuous clip), each naming its event and all of them.
      const eventIds = job.events.map((e) => e.id)
      for (const event of job.events.length > 0 ? job.events : [null]) {
        await events.emit('recording.clipReady', {
          clipId, clipUrl: clipUrlOf(clipId), cameraId: row.cameraId, kind: row.kind, eventId: event?.id ?? null, eventKind: event?.kind ?? null, eventIds,
          taskId: row.taskId, objectId: row.objectId, startTime: row.startTime, endTime: row.endTime, durationMs: row.durationMs, bytes: size,
        })
      }
    }).finally(() => { for (const id of [job.clipId, ...job.aliases]) if (id) promised.settle(id) })
  }
}
