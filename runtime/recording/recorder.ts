import { rm } from 'node:fs/promises'
import type { Logger } from '../../shared/handler.ts'
import type { RecordMode } from '../../shared/recording/types.ts'
import type { Segment, Segmenter } from './segmenter.ts'

export interface ClipEvent {
  /** The event's id; null until the alarm.raised of a policy's clip is written (clipFor). */
  id: number | null
  kind: string
  taskId: string | null
  objectId: string | null
}

/** A clip to write: these segments, joined. */
export interface ClipJob {
  cameraId: string
  kind: 'event' | 'continuous'
  segments: Segment[]
  event: ClipEvent | null
  /** Set when the clip's URL was promised before it was written (an alarm policy's clip action). */
  clipId?: string
}

/** Where a recorder's clips go. */
export interface ClipSink {
  write(job: ClipJob): Promise<void>
  /** A promised clip (clipFor) that will never be written: no video covers it, or recording stopped. */
  abandoned(clipId: string): void
}

export interface RecorderSettings {
  mode: Exclude<RecordMode, 'off'>
  preRollSeconds: number
  postRollSeconds: number
}

export interface RecorderTiming {
  segmentSeconds: number
  maxClipSeconds: number
  continuousChunkSeconds: number
  /** A clip whose end no segment reaches (the camera went offline) is written with what exists this long after its end. */
  graceMs: number
  /** Wall-clock ms (segments and events are in wall-clock time). */
  now(): number
}

/**
 * Wall-clock times of segments are estimates (segmenter.ts): a clip takes this much more
 * video at each end, so that it covers its pre- and post-roll for sure.
 */
const CLOCK_MARGIN_MS = 500

/** An event clip waiting for its post-roll: [from, until] in wall-clock ms; until is null while the object is there. */
interface PendingClip {
  key: string
  event: ClipEvent
  start: number
  from: number
  until: number | null
  clipId?: string
}

/**
 * One recording camera (spec 4.10 System: recording): a ring of short segments that ffmpeg
 * writes, the event clips waiting for their post-roll, and in continuous mode the segments not
 * yet kept as a clip. The ring holds what the longest pre-roll and the waiting clips need;
 * older segments are deleted.
 */
export class CameraRecorder {
  ring: Segment[] = []
  private pending: PendingClip[] = []
  /** Continuous mode: the first segment not yet in a continuous clip. */
  private continuousFrom = 0
  private working = false
  private again = false

  constructor(
    readonly cameraId: string,
    public settings: RecorderSettings,
    readonly segmenter: Segmenter,
    private readonly timing: RecorderTiming,
    private readonly sink: ClipSink,
    private readonly log: Logger,
  ) {}

  get ringBytes(): number {
    return this.ring.reduce((sum, s) => sum + s.bytes, 0)
  }

  start(): void {
    this.segmenter.start()
  }

  /** Stops ffmpeg and deletes the ring; waiting clips are dropped. */
  async stop(): Promise<void> {
    await this.segmenter.stop()
    for (const clip of this.pending) if (clip.clipId) this.sink.abandoned(clip.clipId)
    this.pending = []
    const ring = this.ring
    this.ring = []
    await Promise.all(ring.map((s) => rm(s.file, { force: true })))
  }

  setSettings(settings: RecorderSettings): void {
    if (settings.mode === 'continuous' && this.settings.mode !== 'continuous') this.continuousFrom = (this.ring.at(-1)?.seq ?? 0) + 1
    this.settings = settings
  }

  /** An object's visit began (object.entered at `time`): its clip starts the pre-roll before. */
  entered(event: ClipEvent, time: number): void {
    this.pending.push({ key: `${event.taskId}/${event.objectId}`, event, start: time, from: time - this.settings.preRollSeconds * 1000, until: null })
  }

  /** The visit ended (object.left): its clip goes on for the post-roll. */
  left(taskId: string, objectId: string, time: number): void {
    const visit = this.pending.find((p) => p.key === `${taskId}/${objectId}` && p.until === null)
    if (visit) visit.until = time + this.settings.postRollSeconds * 1000
    this.tick()
  }

  /** An alarm: its clip covers the pre-roll before it and the post-roll after. */
  alarm(event: ClipEvent, time: number): void {
    this.pending.push({ key: `alarm/${event.id}`, event, start: time, from: time - this.settings.preRollSeconds * 1000, until: time + this.settings.postRollSeconds * 1000 })
  }

  /**
   * An alarm policy's clip (spec 4.10 Linkage / alarm policy): its own pre- and post-roll, under
   * the id whose URL the alarm carries. The pre-roll reaches back at most as far as the ring
   * (the camera's pre-roll setting).
   */
  clipFor(clipId: string, event: ClipEvent, time: number, preRollSeconds: number, postRollSeconds: number): void {
    this.pending.push({ key: `clip/${clipId}`, event, start: time, from: time - preRollSeconds * 1000, until: time + postRollSeconds * 1000, clipId })
  }

  /** The alarm event of a promised clip was written: the clip belongs to it. */
  linkClip(clipId: string, eventId: number): boolean {
    const clip = this.pending.find((p) => p.clipId === clipId)
    if (clip) clip.event.id = eventId
    return clip !== undefined
  }

  onSegment(segment: Segment): void {
    if (this.continuousFrom === 0) this.continuousFrom = segment.seq
    this.ring.push(segment)
    this.tick()
  }

  /** Writes what is ready, one clip at a time, then trims the ring. */
  tick(): void {
    if (this.working) {
      this.again = true
      return
    }
    this.working = true
    void (async () => {
      do {
        this.again = false
        for (const job of this.readyJobs(this.timing.now())) {
          try {
            await this.sink.write(job)
          } catch (error) {
            this.log.error({ err: (error as Error).message, kind: job.kind, eventId: job.event?.id }, 'a clip could not be written')
          }
        }
        await this.prune(this.timing.now())
      } while (this.again)
      this.working = false
    })()
  }

  private readyJobs(now: number): ClipJob[] {
    const jobs: ClipJob[] = []
    const recordedTo = this.ring.at(-1)?.wallEnd ?? -Infinity
    for (const clip of [...this.pending]) {
      // A visit longer than the longest clip is closed at that length.
      if (clip.until === null && now >= clip.start + this.timing.maxClipSeconds * 1000) clip.until = clip.start + this.timing.maxClipSeconds * 1000
      if (clip.until === null || (recordedTo < clip.until + CLOCK_MARGIN_MS && now < clip.until + this.timing.graceMs)) continue
      this.pending.splice(this.pending.indexOf(clip), 1)
      const from = clip.from - CLOCK_MARGIN_MS
      const until = clip.until + CLOCK_MARGIN_MS
      const segments = this.ring.filter((s) => s.wallEnd > from && s.wallStart < until)
      if (segments.length > 0) jobs.push({ cameraId: this.cameraId, kind: 'event', segments, event: clip.event, clipId: clip.clipId })
      else {
        this.log.warn({ eventId: clip.event.id }, 'no recorded video covers the event; no clip')
        if (clip.clipId) this.sink.abandoned(clip.clipId)
      }
    }
    if (this.settings.mode === 'continuous') {
      const open = this.ring.filter((s) => s.seq >= this.continuousFrom)
      if (open.length > 0 && open.at(-1)!.wallEnd - open[0]!.wallStart >= this.timing.continuousChunkSeconds * 1000) {
        this.continuousFrom = open.at(-1)!.seq + 1
        jobs.push({ cameraId: this.cameraId, kind: 'continuous', segments: open, event: null })
      }
    }
    return jobs
  }

  /** Deletes segments that no pre-roll, waiting clip or continuous clip can still need. */
  private async prune(now: number): Promise<void> {
    let keepFrom = now - (this.settings.preRollSeconds + 2 * this.timing.segmentSeconds + 5) * 1000
    for (const clip of this.pending) keepFrom = Math.min(keepFrom, clip.from - CLOCK_MARGIN_MS)
    const old = this.ring.filter((s) => s.wallEnd < keepFrom && (this.settings.mode !== 'continuous' || s.seq < this.continuousFrom))
    if (old.length === 0) return
    this.ring = this.ring.filter((s) => !old.includes(s))
    await Promise.all(old.map((s) => rm(s.file, { force: true })))
  }
}
