import type { ObjectRecognition } from '../../shared/galleries/types.ts'
import type { Target, TargetBox } from '../../shared/inference/types.ts'

export interface Detection {
  box: TargetBox
  label: string
  confidence: number
  /** The area (region) the target was found in, and the target as the pipeline gave it (logic result, confidence list). */
  areaId?: string
  target?: Target
}

export interface Track extends Detection {
  id: string
  firstSeen: number
  lastSeen: number
  hits: number
  confirmed: boolean
  /**
   * The latest answer of the task's recognition (runtime/streams/observers/recognition.ts),
   * set once a face in the object's box was described; absent before (and without recognition).
   */
  recognition?: ObjectRecognition
  /** Movement of the box's centre, px per ms, smoothed over the sightings (0 until the second). */
  velocity: { x: number; y: number }
  /**
   * Movement of the box's centre between its last two sightings, px per ms (absent before the
   * second): where it is heading now, a turn included, for a view that moves a box it holds
   * over a frame or two (runtime/streams/task-analysis.ts `latest`).
   */
  recentVelocity?: { x: number; y: number }
}

export interface TrackerOptions {
  /** A detection continues a track when their boxes overlap at least this much (IoU) ... */
  minIou: number
  /**
   * ... or, for the tracks and detections left over, when its centre lies within this share
   * of the track's larger side (a fast walker, or one leaving the frame, whose box shrinks).
   */
  maxCentreShift: number
  /**
   * ... or within this many of its larger sides per second since it was last seen, if that is
   * more: a walker crosses about 0.8 of their height a second, and a detector that falls behind
   * under load sees them a second or more apart ...
   */
  maxSidesPerSecond: number
  /** ... but never more than this share (two people a few seconds apart stay two objects). */
  maxLateShift: number
  /** Sightings before a track is an object (filters one-frame false positives). */
  confirmHits: number
  /**
   * A track not seen for this long has left: ended before a frame's matching once a frame
   * since its last sighting did not show it, else after (see IouTracker).
   */
  leaveAfterMs: number
  /**
   * A track unseen carries on along its velocity for at most this long (a detector that runs
   * at an interval, or misses a frame, still finds the walker where it has got to).
   */
  maxPredictMs: number
}

/** Weight of the newest sighting in the smoothed velocity (boxes jitter a few pixels). */
const VELOCITY_WEIGHT = 0.5

export const iou = (a: TargetBox, b: TargetBox): number => {
  const x = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x))
  const y = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y))
  const inter = x * y
  const union = a.width * a.height + b.width * b.height - inter
  return union > 0 ? inter / union : 0
}

const centre = (box: TargetBox) => ({ x: box.x + box.width / 2, y: box.y + box.height / 2 })

/** Where `track`'s box is at `now`: its last box moved along its velocity (up to `maxPredictMs`). */
export function predictBox(track: Track, now: number, maxPredictMs: number): TargetBox {
  const dt = Math.min(Math.max(0, now - track.lastSeen), maxPredictMs)
  return { ...track.box, x: track.box.x + track.velocity.x * dt, y: track.box.y + track.velocity.y * dt }
}

/**
 * Associates detections across frames into objects with stable ids: greedy matching of the
 * highest-overlap pairs of the same label, then of the nearest centres, each track looked for
 * where its velocity has taken it since it was last seen and where it was last seen, a late
 * sighting allowed further (`maxSidesPerSecond`, up to `maxLateShift`); a track confirmed after
 * `confirmHits` sightings, and ended after `leaveAfterMs` without one. Such a track is ended
 * before the frame's matching when a frame seen since its last sighting did not show it (the
 * object was looked for and was gone: someone walking in 3 s after a person left must not
 * continue that person), after the matching otherwise: a detector that saw no frame for that
 * long has no evidence the object left (ending it first split visits when frames came seconds
 * apart). Returns the objects that entered and left.
 */
export class IouTracker {
  private tracks: Track[] = []
  private next = 1
  /** The tracks a frame seen since their last sighting did not show (looked for, not found). */
  private readonly missed = new WeakSet<Track>()

  constructor(private readonly options: TrackerOptions) {}

  get active(): number {
    return this.tracks.length
  }

  /** Whether a track is not confirmed yet (its next sighting makes it an object). */
  get hasTentative(): boolean {
    return this.tracks.some((track) => !track.confirmed)
  }

  /** The confirmed objects being tracked. */
  get objects(): Track[] {
    return this.tracks.filter((track) => track.confirmed)
  }

  /** The track that a detection of the last update continued or began (it took the detection's box). */
  trackOf(detection: Detection): Track | undefined {
    return this.tracks.find((track) => track.box === detection.box)
  }

  /** Every track (tentative ones included) with its box where it should be at `now`. */
  predict(now: number): { track: Track; box: TargetBox }[] {
    return this.tracks.map((track) => ({ track, box: predictBox(track, now, this.options.maxPredictMs) }))
  }

  update(detections: Detection[], now: number): { entered: Track[]; left: Track[] } {
    const gone = this.expire(now, (track) => this.missed.has(track))
    const predicted = new Map(this.predict(now).map(({ track, box }) => [track, box]))
    const usedTracks = new Set<Track>()
    const usedDetections = new Set<Detection>()
    const entered: Track[] = []
    // Best pairs first: by overlap, then the rest by centre distance.
    const match = (score: (track: Track, detection: Detection) => number | null) => {
      const pairs: { track: Track; detection: Detection; value: number }[] = []
      for (const track of this.tracks)
        for (const detection of detections) {
          if (usedTracks.has(track) || usedDetections.has(detection) || detection.label !== track.label) continue
          const value = score(track, detection)
          if (value !== null) pairs.push({ track, detection, value })
        }
      pairs.sort((a, b) => b.value - a.value)
      for (const { track, detection } of pairs) {
        if (usedTracks.has(track) || usedDetections.has(detection)) continue
        usedTracks.add(track)
        usedDetections.add(detection)
        const dt = now - track.lastSeen
        if (dt > 0) {
          const seen = { x: (centre(detection.box).x - centre(track.box).x) / dt, y: (centre(detection.box).y - centre(track.box).y) / dt }
          const w = track.hits === 1 ? 1 : VELOCITY_WEIGHT
          track.velocity = { x: w * seen.x + (1 - w) * track.velocity.x, y: w * seen.y + (1 - w) * track.velocity.y }
          track.recentVelocity = seen
        }
        Object.assign(track, { box: detection.box, confidence: detection.confidence, areaId: detection.areaId, target: detection.target, lastSeen: now, hits: track.hits + 1 })
        if (!track.confirmed && track.hits >= this.options.confirmHits) {
          track.confirmed = true
          entered.push(track)
        }
      }
    }
    // Each track is looked for where its velocity has taken it and where it was last seen: the
    // velocity of a box's centre overshoots when the box grew rather than moved (a person rising
    // into view from the frame's edge, whose feet stay put) or when the walker stopped.
    const places = (track: Track) => [predicted.get(track)!, track.box]
    match((track, detection) => {
      const overlap = Math.max(...places(track).map((box) => iou(box, detection.box)))
      return overlap >= this.options.minIou ? overlap : null
    })
    match((track, detection) => {
      const to = centre(detection.box)
      const shift = Math.min(...places(track).map((box) => Math.hypot(centre(box).x - to.x, centre(box).y - to.y)))
      const sides = Math.max(this.options.maxCentreShift, Math.min(this.options.maxLateShift, (this.options.maxSidesPerSecond * (now - track.lastSeen)) / 1000))
      const limit = sides * Math.max(track.box.width, track.box.height)
      return shift <= limit ? -shift : null
    })
    for (const detection of detections) {
      if (usedDetections.has(detection)) continue
      const track: Track = { ...detection, id: String(this.next++), firstSeen: now, lastSeen: now, hits: 1, confirmed: this.options.confirmHits <= 1, velocity: { x: 0, y: 0 } }
      this.tracks.push(track)
      if (track.confirmed) entered.push(track)
    }
    for (const track of this.tracks) {
      if (track.lastSeen < now) this.missed.add(track)
      else this.missed.delete(track)
    }
    return { entered, left: [...gone, ...this.expire(now)] }
  }

  /** Ends the tracks (`which` of them) not seen for the leave delay; the confirmed ones are returned. */
  private expire(now: number, which: (track: Track) => boolean = () => true): Track[] {
    const gone = this.tracks.filter((track) => now - track.lastSeen > this.options.leaveAfterMs && which(track))
    this.tracks = this.tracks.filter((track) => !gone.includes(track))
    return gone.filter((track) => track.confirmed)
  }

  /** Ends every track (task stop): the confirmed ones are returned. */
  clear(): Track[] {
    const all = this.tracks.filter((track) => track.confirmed)
    this.tracks = []
    return all
  }
}
