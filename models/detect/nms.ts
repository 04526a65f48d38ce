/** Greedy non-maximum suppression per class. */
import type { Box, Detection } from './types.ts'

export function iou(a: Box, b: Box): number {
  const w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1)
  const h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1)
  if (w <= 0 || h <= 0) return 0
  const inter = w * h
  const union = (a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter
  return union > 0 ? inter / union : 0
}

/** Keeps the highest-scoring detection of each overlapping same-class group. */
export function nonMaxSuppression(candidates: readonly Detection[], iouThreshold: number, maxDetections: number): Detection[] {
  const sorted = [...candidates].sort((a, b) => b.score - a.score)
  const kept: Detection[] = []
  for (const d of sorted) {
    if (kept.length >= maxDetections) break
    if (kept.every((k) => k.classId !== d.classId || iou(k.box, d.box) <= iouThreshold)) kept.push(d)
  }
  return kept
}
