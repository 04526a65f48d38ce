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
  /** The URL id an alarm policy's clip action promised for this event (clipFor), if any. */
  promisedId?: string
}

/** A clip to write: these segments, joined. */
export interface ClipJob {
  cameraId: string
  kind: 'event' | 'continuous'
  segments: Segment[]
  /** The first originating event (object.entered, else the first alarm); null for continuous clips. */
  event: ClipEvent | null
  /** Every originating event, in order (one object's visit and the alarms raised on it share a clip). */
  events: ClipEvent[]
  /** Set when the clip's URL was promised before it was written (an alarm policy's clip action): the first promised id. */
  clipId?: string
  /** The other URL ids promised for events merged into this clip: they serve this clip. */
  aliases: string[]
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

/**
 * An event clip waiting for its post-roll: [from, until] in wall-clock ms; until is null while
 * the object is there. One tracked object's visit and the alarms raised on it are one pending
 * clip (`object` = task/object), spanning the union of their rolls.
 */
interface PendingClip {
  /** `task/object` for clips of one tracked object, else null (an alarm on no single object). */
  object: string | null
  events: ClipEvent[]
  /** The first event's time. */
  start: number
  from: number
  until: number | null
  /** The latest end an alarm merged into an open visit asked for (its post-roll). */
  atLeast: number
  /** The visit (object.entered) is under way: its end comes with object.left. */
  open: boolean
}

const objectKey = (event: ClipEvent) => (event.taskId !== null && event.objectId !== null ? `${event.taskId}/${event.objectId}` : null)
const promisedIds = (clip: PendingClip) => clip.events.flatMap((e) => (e.promisedId ? [e.promisedId] : []))

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
  /** The write-and-trim round in progress (tick). */
  private work: Promise<void> = Promise.resolve()

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
    for (const clip of this.pending) for (const id of promisedIds(clip)) this.sink.abandoned(id)
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
    const from = time - this.settings.preRollSeconds * 1000
    const merged = this.merge(event, time, from, time)
    if (merged) {
      // An alarm came first: the clip now waits for the object to leave.
      merged.open = true
      merged.until = null
    } else this.pending.push({ object: objectKey(event), events: [event], start: time, from, until: null, atLeast: time, open: true })
  }

  /** The visit ended (object.left): its clip goes on for the post-roll (and at least to the end of its alarms' clips). */
  left(taskId: string, objectId: string, time: number): void {
    const visit = this.pending.find((p) => p.object === `${taskId}/${objectId}` && p.open)
    if (visit) {
      visit.open = false
      visit.until = Math.max(time + this.settings.postRollSeconds * 1000, visit.atLeast, visit.until ?? -Infinity)
    }
    this.tick()
  }

  /** An alarm: its clip covers the pre-roll before it and the post-roll after. */
  alarm(event: ClipEvent, time: number): void {
    this.clipAround(event, time, this.settings.preRollSeconds, this.settings.postRollSeconds)
  }

  /**
   * An alarm policy's clip (spec 4.10 Linkage / alarm policy): its own pre- and post-roll, under
   * the id whose URL the alarm carries. The pre-roll reaches back at most as far as the ring
   * (the camera's pre-roll setting).
   */
  clipFor(clipId: string, event: ClipEvent, time: number, preRollSeconds: number, postRollSeconds: number): void {
    this.clipAround({ ...event, promisedId: clipId }, time, preRollSeconds, postRollSeconds)
  }

  private clipAround(event: ClipEvent, time: number, preRollSeconds: number, postRollSeconds: number): void {
    const from = time - preRollSeconds * 1000
    const until = time + postRollSeconds * 1000
    if (this.merge(event, time, from, until)) return
    this.pending.push({ object: objectKey(event), events: [event], start: time, from, until, atLeast: until, open: false })
  }

  /**
   * Joins an event of a tracked object to the clip of that object still waiting to be written
   * (docs/recording-and-live-view.md "Recording": one clip per object), when the union stays
   * within RECORD_MAX_CLIP_SECONDS from the first event to the last end; else null.
   */
  private merge(event: ClipEvent, time: number, from: number, until: number): PendingClip | null {
    const key = objectKey(event)
    if (key === null) return null
    const clip = this.pending.find((p) => p.object === key)
    if (!clip) return null
    const start = Math.min(clip.start, time)
    const end = Math.max(clip.until ?? clip.atLeast, until)
    if (end - start > this.timing.maxClipSeconds * 1000) return null
    clip.events.push(event)
    clip.start = start
    clip.from = Math.min(clip.from, from)
    clip.atLeast = Math.max(clip.atLeast, until)
    if (clip.until !== null) clip.until = Math.max(clip.until, until)
    return clip
  }

  /**
   * A promised clip (clipFor) still waiting here: the time its footage should end (null while
   * its object is there: an alarm on an object shares the object's clip), or undefined.
   */
  waitingFor(clipId: string): number | null | undefined {
    const clip = this.pending.find((p) => p.events.some((e) => e.promisedId === clipId))
    return clip ? clip.until : undefined
  }

  /** The alarm event of a promised clip was written: the clip belongs to it. */
  linkClip(clipId: string, eventId: number): boolean {
    const event = this.pending.flatMap((p) => p.events).find((e) => e.promisedId === clipId)
    if (event) event.id = eventId
    return event !== undefined
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
    this.work = (async () => {
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

  /** Resolves once the clips ready so far are written and the ring trimmed. */
  async idle(): Promise<void> {
    while (this.working) await this.work
  }

  private readyJobs(now: number): ClipJob[] {
    const jobs: ClipJob[] = []
    const recordedTo = this.ring.at(-1)?.wallEnd ?? -Infinity
    for (const clip of [...this.pending]) {
      // A visit longer than the longest clip is closed at that length.
      if (clip.until === null && now >= clip.start + this.timing.maxClipSeconds * 1000) clip.until = clip.start + this.timing.maxClipSeconds * 1000
      if (clip.open && clip.until !== null) clip.open = false
      if (clip.until === null || (recordedTo < clip.until + CLOCK_MARGIN_MS && now < clip.until + this.timing.graceMs)) continue
      this.pending.splice(this.pending.indexOf(clip), 1)
      const from = clip.from - CLOCK_MARGIN_MS
      const until = clip.until + CLOCK_MARGIN_MS
      const segments = this.ring.filter((s) => s.wallEnd > from && s.wallStart < until)
      const [clipId, ...aliases] = promisedIds(clip)
      if (segments.length > 0) jobs.push({ cameraId: this.cameraId, kind: 'event', segments, event: clip.events[0]!, events: clip.events, clipId, aliases })
      else {
        this.log.warn({ eventIds: clip.events.map((e) => e.id) }, 'no recorded video covers the event; no clip')
        for (const id of promisedIds(clip)) this.sink.abandoned(id)
      }
    }
    if (this.settings.mode === 'continuous') {
      const open = this.ring.filter((s) => s.seq >= this.continuousFrom)
      if (open.length > 0 && open.at(-1)!.wallEnd - open[0]!.wallStart >= this.timing.continuousChunkSeconds * 1000) {
        this.continuousFrom = open.at(-1)!.seq + 1
        jobs.push({ cameraId: this.cameraId, kind: 'continuous', segments: open, event: null, events: [], aliases: [] })
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
