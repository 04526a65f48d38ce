import type { DetectionResultCore, TargetBox } from '../../shared/inference/types.ts'
import type { GateDecision } from './gating.ts'

/**
 * Detection on motion regions (docs/cameras-and-stream-tasks.md "Detection on motion regions"),
 * as Frigate crops the regions where motion was found: the boxes to look at (motion regions and
 * the tracked objects' predicted boxes, in the analysed frame's pixels) are padded, merged
 * where they overlap, made square and at least the detector's input side (within the frame),
 * and each square is cut from the frame and detected on its own. Pure.
 */
export interface RegionSettings {
  /** Margin added on each side of a box, as a share of its larger side (a walker's next step, arms). */
  padShare: number
  /** The smallest crop side, frame pixels (the detector's input side, at most the frame's shorter side). */
  minSide: number
  /** More crops than this: the whole frame instead. */
  maxRegions: number
  /** Crops covering more than this share of the frame's area together: the whole frame instead. */
  maxCoverage: number
}

export const REGION_DEFAULTS = { padShare: 0.25, maxRegions: 2, maxCoverage: 0.6 } as const

/** A detection touching a crop's edge within this many pixels (where the crop is not the frame's edge) may be cut off. */
export const EDGE_PX = 2

const overlaps = (a: TargetBox, b: TargetBox) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
const union = (a: TargetBox, b: TargetBox): TargetBox => {
  const x = Math.min(a.x, b.x), y = Math.min(a.y, b.y)
  return { x, y, width: Math.max(a.x + a.width, b.x + b.width) - x, height: Math.max(a.y + a.height, b.y + b.height) - y }
}

/** `box` cut to the frame, whole pixels (outward); null when nothing of it is inside. */
export function clip(box: TargetBox, frame: { width: number; height: number }): TargetBox | null {
  const x0 = Math.max(0, Math.floor(box.x)), y0 = Math.max(0, Math.floor(box.y))
  const x1 = Math.min(frame.width, Math.ceil(box.x + box.width)), y1 = Math.min(frame.height, Math.ceil(box.y + box.height))
  return x1 > x0 && y1 > y0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null
}

/** `box` grown by `share` of its larger side on each side, cut to the frame. */
export function pad(box: TargetBox, share: number, frame: { width: number; height: number }): TargetBox | null {
  const m = share * Math.max(box.width, box.height)
  return clip({ x: box.x - m, y: box.y - m, width: box.width + 2 * m, height: box.height + 2 * m }, frame)
}

/** Boxes that overlap replaced by their union, until none overlap (order: first box first). */
export function merge(boxes: TargetBox[]): TargetBox[] {
  const out = [...boxes]
  for (let merged = true; merged;) {
    merged = false
    for (let i = 0; i < out.length && !merged; i++)
      for (let j = i + 1; j < out.length; j++)
        if (overlaps(out[i]!, out[j]!)) {
          out[i] = union(out[i]!, out[j]!)
          out.splice(j, 1)
          merged = true
          break
        }
  }
  return out
}

/**
 * The square around `box`'s centre with side max(width, height, minSide), moved inside the
 * frame; a side longer than the frame's is the frame's (the crop is then not square).
 */
export function square(box: TargetBox, minSide: number, frame: { width: number; height: number }): TargetBox {
  const side = Math.max(box.width, box.height, minSide)
  const width = Math.min(side, frame.width), height = Math.min(side, frame.height)
  const cx = box.x + box.width / 2, cy = box.y + box.height / 2
  const x = Math.min(Math.max(0, Math.round(cx - width / 2)), frame.width - width)
  const y = Math.min(Math.max(0, Math.round(cy - height / 2)), frame.height - height)
  return { x, y, width, height }
}

/**
 * The crops to detect for `boxes` (frame pixels), or null for the whole frame: no box, more
 * than `maxRegions` crops, or crops covering more than `maxCoverage` of the frame.
 */
export function planRegions(boxes: TargetBox[], frame: { width: number; height: number }, settings: RegionSettings): TargetBox[] | null {
  const padded = boxes.flatMap((box) => pad(box, settings.padShare, frame) ?? [])
  if (padded.length === 0) return null
  let crops = merge(padded).map((box) => square(box, settings.minSide, frame))
  // Squares grown past their boxes may overlap again: merge and square until they do not.
  for (let again = true; again;) {
    const merged = merge(crops)
    again = merged.length < crops.length
    crops = again ? merged.map((box) => square(box, settings.minSide, frame)) : merged
  }
  const covered = crops.reduce((sum, c) => sum + c.width * c.height, 0)
  if (crops.length > settings.maxRegions || covered > settings.maxCoverage * frame.width * frame.height) return null
  return crops
}

/** The pixels of `crop` (whole pixels inside the frame) from a packed RGB frame `width` pixels wide. */
export function cropRgb(rgb: Uint8Array, width: number, crop: TargetBox): Buffer {
  const out = Buffer.allocUnsafe(crop.width * crop.height * 3)
  const row = crop.width * 3
  for (let y = 0; y < crop.height; y++) {
    const from = ((crop.y + y) * width + crop.x) * 3
    out.set(rgb.subarray(from, from + row), y * row)
  }
  return out
}

/** A box found in `crop` in the frame's pixels. */
export const toFrame = (box: TargetBox, crop: TargetBox): TargetBox => ({ x: box.x + crop.x, y: box.y + crop.y, width: box.width, height: box.height })

/**
 * Whether a box found in `crop` (crop pixels) touches one of the crop's edges that lies inside
 * the frame: the object may reach past the crop and its box be cut.
 */
export function cutByCrop(box: TargetBox, crop: TargetBox, frame: { width: number; height: number }): boolean {
  return (crop.x > 0 && box.x <= EDGE_PX) || (crop.y > 0 && box.y <= EDGE_PX) ||
    (crop.x + crop.width < frame.width && box.x + box.width >= crop.width - EDGE_PX) ||
    (crop.y + crop.height < frame.height && box.y + box.height >= crop.height - EDGE_PX)
}

/**
 * The results of the crops as one result in the frame's pixels: each area's targets together,
 * boxes and landmarks (pixel values, spec 2.6) moved by their crop's corner. Only for pipelines
 * whose result does not depend on the image as a whole (see regionsApply).
 */
export function joinResults(parts: { result: DetectionResultCore; crop: TargetBox }[]): DetectionResultCore {
  const first = parts[0]!.result
  const areaList = first.areaList.map((area) => ({
    ...area,
    targetList: parts.flatMap(({ result, crop }) => (result.areaList.find((a) => a.areaId === area.areaId)?.targetList ?? []).map((target) => ({
      ...target,
      box: toFrame(target.box, crop),
      landmark: target.landmark.map((p) => ({ xRatio: p.xRatio + crop.x, yRatio: p.yRatio + crop.y })),
    }))),
  }))
  return { ...first, areaList }
}

/** The gate's reasons to detect that look at the motion regions; the others (interval, stationary) look at the whole frame. */
const REGION_REASONS: ReadonlySet<GateDecision['reason']> = new Set(['motion', 'newMotion', 'walking'])

export interface CropQuestion {
  /** The smallest crop side (the detector's input side); null: the task detects whole frames. */
  side: number | null
  /** Why the gate runs the detector on this frame. */
  reason: GateDecision['reason']
  /** Since the frame last detected whole, and the task's minDetectIntervalMs: the whole frame is due at that interval. */
  sinceWholeMs: number
  minDetectIntervalMs: number
  /** The motion regions and the tracked objects' predicted boxes, in the frame's pixels. */
  motion: TargetBox[]
  tracked: TargetBox[]
  frame: { width: number; height: number }
}

/**
 * The crops to detect on a frame, or null for the whole frame: when the gate runs the detector
 * for the interval or a still object, when the whole frame is due, or when the crops around
 * the motion and the tracked objects would be too many or too large. Every tracked object's
 * predicted box is part of the crops, so an object is looked for where it should be on every
 * frame; one that has walked away from the motion makes the crops too large, and the whole
 * frame is detected.
 */
export function cropsFor(q: CropQuestion): TargetBox[] | null {
  if (q.side === null || !REGION_REASONS.has(q.reason) || q.sinceWholeMs >= q.minDetectIntervalMs) return null
  return planRegions([...q.motion, ...q.tracked], q.frame, { ...REGION_DEFAULTS, minSide: Math.min(q.side, q.frame.width, q.frame.height) })
}

type Detect = (image: { kind: 'rgb'; width: number; height: number; data: Uint8Array }) => Promise<DetectionResultCore>

/**
 * The crops of a packed RGB frame detected one by one, their targets in the frame's pixels;
 * null when a target touches a crop's inner edge (it may be cut off: the caller detects the
 * whole frame instead).
 */
export async function detectCrops(detect: Detect, frame: { rgb: Uint8Array; width: number; height: number }, crops: TargetBox[]): Promise<DetectionResultCore | null> {
  const parts: { result: DetectionResultCore; crop: TargetBox }[] = []
  for (const crop of crops) {
    const result = await detect({ kind: 'rgb', width: crop.width, height: crop.height, data: cropRgb(frame.rgb, frame.width, crop) })
    if (result.areaList.some((area) => area.targetList.some((target) => cutByCrop(target.box, crop, frame)))) return null
    parts.push({ result, crop })
  }
  return joinResults(parts)
}
