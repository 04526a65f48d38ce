/**
 * Accuracy of shrink-on-load against the full decode (docs/detection.md "Decoding at the
 * model's size"): the same images through two engines, one decoding in full, one at the
 * detector's size; faces and persons are matched one to one (same count, IoU ≥ 0.9 per box,
 * landmarks within 3 % of the face's width), and a label may change only where the full
 * decode's confidence of it was below 0.6. Used by the integration test and the benchmark.
 */
import type { DetectionResultCore, Target } from '../../shared/inference/types.ts'
import { iou } from '../../runtime/sidecar/pipeline/geometry.ts'

export const MIN_IOU = 0.9
export const MAX_LANDMARK_SHIFT = 0.03
export const LABEL_CONFIDENCE = 0.6

export const targetsOf = (result: DetectionResultCore): Target[] => result.areaList.flatMap((a) => a.targetList)

export interface Comparison {
  /** Targets of the full decode and of the shrunk one. */
  full: number
  shrunk: number
  /** Each full-decode target's best IoU with its match (matched greedily by IoU). */
  ious: number[]
  /** Largest landmark shift of a matched face, as a share of its width. */
  landmarkShift: number
  /** Labels that changed (added or removed) where the full decode's confidence was ≥ LABEL_CONFIDENCE, or was absent. */
  labelChanges: string[]
  /** Labels that changed where it was allowed (full-decode confidence below LABEL_CONFIDENCE). */
  allowedLabelChanges: number
  holds: boolean
}

/** The boxes matched one to one by IoU, greedily (highest first); unmatched ones get 0. */
function match(full: Target[], shrunk: Target[]): (number | null)[] {
  const pairs: [number, number, number][] = []
  for (const [i, a] of full.entries()) for (const [j, b] of shrunk.entries()) pairs.push([iou(a.box, b.box), i, j])
  pairs.sort((p, q) => q[0] - p[0])
  const out: (number | null)[] = full.map(() => null)
  const used = new Set<number>()
  for (const [, i, j] of pairs) if (out[i] === null && !used.has(j)) { out[i] = j; used.add(j) }
  return out
}

export function compareResults(fullResult: DetectionResultCore, shrunkResult: DetectionResultCore): Comparison {
  return compareTargets(targetsOf(fullResult), targetsOf(shrunkResult))
}

/** compareResults on the targets themselves (an HTTP answer's `areaList[].targetList[]`). */
export function compareTargets(full: Target[], shrunk: Target[]): Comparison {
  const matched = match(full, shrunk)
  const ious: number[] = []
  let landmarkShift = 0
  const labelChanges: string[] = []
  let allowedLabelChanges = 0
  for (const [i, a] of full.entries()) {
    const j = matched[i]
    if (j === null || j === undefined) { ious.push(0); continue }
    const b = shrunk[j]!
    ious.push(iou(a.box, b.box))
    for (const [k, p] of a.landmark.entries()) {
      const q = b.landmark[k]
      const shift = q ? Math.hypot(p.xRatio - q.xRatio, p.yRatio - q.yRatio) / a.box.width : Infinity
      landmarkShift = Math.max(landmarkShift, shift)
    }
    // The detector's own class label is the first item; the rest are a classifier's labels.
    const labelsA = new Map(a.confidence.slice(1).map((c) => [c.label, c.confidence]))
    const labelsB = new Map(b.confidence.slice(1).map((c) => [c.label, c.confidence]))
    for (const label of new Set([...labelsA.keys(), ...labelsB.keys()])) {
      if (labelsA.has(label) && labelsB.has(label)) continue
      // A label of the full decode that went away, or one that came: its full-decode
      // confidence is that of the label the full decode gave in its place (the same head's
      // winner), below LABEL_CONFIDENCE where the change is allowed.
      const fullConfidence = labelsA.get(label) ?? replacedConfidence(label, labelsA)
      if (fullConfidence < LABEL_CONFIDENCE) allowedLabelChanges++
      else labelChanges.push(`${label} (full decode ${fullConfidence.toFixed(2)})`)
    }
  }
  const holds = full.length === shrunk.length && ious.every((v) => v >= MIN_IOU) && landmarkShift <= MAX_LANDMARK_SHIFT && labelChanges.length === 0
  return { full: full.length, shrunk: shrunk.length, ious, landmarkShift, labelChanges, allowedLabelChanges, holds }
}

/**
 * A label the shrunk decode gave that the full one did not: the full decode's label of the
 * same kind (emotion, gender, `age:`) is what it replaces; its confidence decides.
 */
function replacedConfidence(label: string, labels: Map<string, number>): number {
  const kind = kindOf(label)
  let best = -1
  for (const [other, confidence] of labels) if (kindOf(other) === kind) best = Math.max(best, confidence)
  // Nothing of that kind in the full decode: it was below the node's threshold there.
  return best < 0 ? 0 : best
}

const GENDERS = new Set(['male', 'female'])
const kindOf = (label: string) => (label.startsWith('age:') ? 'age' : GENDERS.has(label) ? 'gender' : 'other')
