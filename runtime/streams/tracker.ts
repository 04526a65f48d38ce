import type { TargetBox } from '../../shared/inference/types.ts'

export interface Detection {
  box: TargetBox
  label: string
  confidence: number
}

export interface Track extends Detection {
  id: string
  firstSeen: number
  lastSeen: number
  hits: number
  confirmed: boolean
}

export interface TrackerOptions {
  /** A detection continues a track when their boxes overlap at least this much (IoU). */
  minIou: number
  /** Sightings before a track is an object (filters one-frame false positives). */
  confirmHits: number
  /** A track not seen for this long has left. */
  leaveAfterMs: number
}

export const iou = (a: TargetBox, b: TargetBox): number => {
  const x = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x))
  const y = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y))
  const inter = x * y
  const union = a.width * a.height + b.width * b.height - inter
  return union > 0 ? inter / union : 0
}

/**
 * Associates detections across frames into objects with stable ids: greedy matching of the
 * highest-overlap pairs of the same label, a track confirmed after `confirmHits` sightings,
 * and ended after `leaveAfterMs` without one. Returns the objects that entered and left.
 */
export class IouTracker {
  private tracks: Track[] = []
  private next = 1

  constructor(private readonly options: TrackerOptions) {}

  get active(): number {
    return this.tracks.length
  }

  update(detections: Detection[], now: number): { entered: Track[]; left: Track[] } {
    const pairs: { track: Track; detection: Detection; overlap: number }[] = []
    for (const track of this.tracks)
      for (const detection of detections) {
        const overlap = detection.label === track.label ? iou(track.box, detection.box) : 0
        if (overlap >= this.options.minIou) pairs.push({ track, detection, overlap })
      }
    pairs.sort((a, b) => b.overlap - a.overlap)
    const usedTracks = new Set<Track>()
    const usedDetections = new Set<Detection>()
    const entered: Track[] = []
    for (const { track, detection } of pairs) {
      if (usedTracks.has(track) || usedDetections.has(detection)) continue
      usedTracks.add(track)
      usedDetections.add(detection)
      Object.assign(track, { box: detection.box, confidence: detection.confidence, lastSeen: now, hits: track.hits + 1 })
      if (!track.confirmed && track.hits >= this.options.confirmHits) {
        track.confirmed = true
        entered.push(track)
      }
    }
    for (const detection of detections) {
      if (usedDetections.has(detection)) continue
      const track: Track = { ...detection, id: String(this.next++), firstSeen: now, lastSeen: now, hits: 1, confirmed: this.options.confirmHits <= 1 }
      this.tracks.push(track)
      if (track.confirmed) entered.push(track)
    }
    return { entered, left: this.expire(now) }
  }

  /** Ends the tracks not seen for the leave delay; the confirmed ones are returned. */
  expire(now: number): Track[] {
    const gone = this.tracks.filter((track) => now - track.lastSeen > this.options.leaveAfterMs)
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
