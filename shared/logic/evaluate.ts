import type { LogicCondition, LogicSpec, LogicTarget } from './condition.ts'

export interface TargetVerdict {
  index: number
  bLogicResult: boolean
  /** The confidence item that satisfied the label clause, when one did. */
  matched: { label: string; confidence: number } | null
  /** Names of the clauses that failed (label, confidence, size, region). */
  failed: string[]
}

export interface LogicVerdict {
  targets: TargetVerdict[]
  metCount: number
  bDetected: boolean
}

/** Ray casting: whether (x, y) lies inside the polygon. */
export function insidePolygon(x: number, y: number, polygon: { xRatio: number; yRatio: number }[]): boolean {
  let inside = false
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[i]!
    const b = polygon[j]!
    if ((a.yRatio > y) !== (b.yRatio > y) && x < ((b.xRatio - a.xRatio) * (y - a.yRatio)) / (b.yRatio - a.yRatio) + a.xRatio) inside = !inside
  }
  return inside
}

function judge(condition: LogicCondition, target: LogicTarget, index: number, image: { width: number; height: number } | null): TargetVerdict {
  const failed: string[] = []
  const wanted = condition.labels ?? (condition.label ? [condition.label] : null)
  const min = condition.minConfidence ?? 0
  const max = condition.maxConfidence ?? 1
  const candidates = wanted ? target.confidence.filter((c) => wanted.includes(c.label)) : target.confidence
  if (wanted && candidates.length === 0) failed.push('label')
  const matched = candidates.filter((c) => c.confidence >= min && c.confidence <= max).sort((a, b) => b.confidence - a.confidence)[0] ?? null
  if (candidates.length > 0 && !matched) failed.push('confidence')
  if ((condition.minBoxWidth !== undefined && target.box.width < condition.minBoxWidth) ||
    (condition.minBoxHeight !== undefined && target.box.height < condition.minBoxHeight)) failed.push('size')
  if (condition.region && image) {
    const cx = (target.box.x + target.box.width / 2) / image.width
    const cy = (target.box.y + target.box.height / 2) / image.height
    if (!insidePolygon(cx, cy, condition.region)) failed.push('region')
  }
  return { index, bLogicResult: failed.length === 0, matched: matched ? { label: matched.label, confidence: matched.confidence } : null, failed }
}

/** Evaluates a logic node against a target list. `image` is needed when the condition has a region. */
export function evaluateLogic(spec: LogicSpec, targets: LogicTarget[], image: { width: number; height: number } | null): LogicVerdict {
  const verdicts = targets.map((target, index) => judge(spec.condition, target, index, image))
  const metCount = verdicts.filter((v) => v.bLogicResult).length
  const minTargets = spec.minTargets ?? 1
  const bDetected = metCount >= minTargets && (spec.maxTargets === undefined || metCount <= spec.maxTargets)
  return { targets: verdicts, metCount, bDetected }
}
