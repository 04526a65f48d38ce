import type { Nms } from '../../../models/manifest-schema.ts'
import type { Detection } from './detection.ts'
import { iou } from './geometry.ts'

/**
 * Non-maximum suppression per class, highest score first (ties keep their input order).
 * `weighted` follows MediaPipe's NonMaxSuppressionCalculator (WEIGHTED): every cluster of
 * boxes overlapping the best one above the threshold is blended, coordinates and keypoints
 * averaged by score; the cluster keeps the best score. `hard` keeps the best box of each
 * cluster (greedy NMS). At most `maxDetections` are kept.
 */
export function nonMaxSuppression(detections: Detection[], options: Nms): Detection[] {
  const remaining = [...detections].sort((a, b) => b.score - a.score)
  const kept: Detection[] = []
  while (remaining.length > 0 && kept.length < options.maxDetections) {
    const best = remaining[0]!
    const cluster: Detection[] = []
    const rest: Detection[] = []
    for (const d of remaining) {
      // `d === best`: the best box leads its cluster even at an IoU threshold of 1.
      if (d === best || (d.classIndex === best.classIndex && iou(best.box, d.box) > options.iouThreshold)) cluster.push(d)
      else rest.push(d)
    }
    remaining.splice(0, remaining.length, ...rest)
    kept.push(options.method === 'weighted' ? blend(cluster, best) : best)
  }
  return kept
}

function blend(cluster: Detection[], best: Detection): Detection {
  if (cluster.length === 1) return best
  const total = cluster.reduce((s, d) => s + d.score, 0)
  const avg = (f: (d: Detection) => number) => cluster.reduce((s, d) => s + f(d) * d.score, 0) / total
  const out: Detection = {
    box: { x: avg((d) => d.box.x), y: avg((d) => d.box.y), width: avg((d) => d.box.width), height: avg((d) => d.box.height) },
    score: best.score,
    classIndex: best.classIndex,
  }
  if (best.keypoints)
    out.keypoints = best.keypoints.map((_, k) => ({ x: avg((d) => d.keypoints![k]!.x), y: avg((d) => d.keypoints![k]!.y) }))
  if (best.polygon) out.polygon = best.polygon
  return out
}
