import type { PipelineManifest } from '../../../models/manifest-schema.ts'
import { DEFAULT_AREA, type Area, type DetectionResultCore, type Target } from '../../../shared/inference/types.ts'
import type { Region, TaskConfig } from '../../../shared/tasks/types.ts'
import { boundingBox, pointInPolygon, type Box, type Point } from './geometry.ts'
import type { PipelineOutput, WorkTarget } from './pipeline.ts'

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits

/**
 * Maps pipeline targets onto the result of spec 2.6: areas (the task's regions, or the
 * default area with its fixed id), targets with `box` in source pixels, `confidence[]`,
 * `landmark[]` (pixel values under the `xRatio`/`yRatio` keys), normalized `maskPolygon[]`,
 * and `bLogicResult`/`bDetected` decided by the logic node. No top-level `targetList`.
 */
export function buildResult(
  manifest: PipelineManifest,
  output: PipelineOutput,
  size: { width: number; height: number },
  config: TaskConfig,
  timestamp: number,
): DetectionResultCore {
  const targets = output.targets.map((t) => ({ work: t, target: toTarget(t, manifest, size, output.logic !== null) }))
  const regions: (Region | null)[] = config.regions && config.regions.length > 0 ? config.regions : [null]
  const areaList: Area[] = regions.map((region) => {
    const inside = region === null
      ? targets
      : targets.filter(({ target }) => pointInPolygon(centre(target.box), region.polygon.map((p) => ({ x: p.xRatio * size.width, y: p.yRatio * size.height }))))
    const triggered = output.logic !== null && inside.filter(({ work }) => work.logic).length >= output.logic.minTargets
    return {
      areaId: region?.areaId ?? DEFAULT_AREA.areaId,
      areaName: region ? region.areaName ?? region.areaId : DEFAULT_AREA.areaName,
      // spec 2.6: the area-logic trigger, not a found flag; false without a logic node.
      bDetected: triggered,
      targetList: inside.map(({ target }) => target),
    }
  })
  return { algorithmCode: manifest.algorithmId, timestamp: String(timestamp), areaList }
}

const centre = (b: Box): Point => ({ x: b.x + b.width / 2, y: b.y + b.height / 2 })

function toTarget(work: WorkTarget, manifest: PipelineManifest, size: { width: number; height: number }, hasLogic: boolean): Target {
  const clampPoint = (p: Point): Point => ({ x: Math.min(Math.max(p.x, 0), size.width), y: Math.min(Math.max(p.y, 0), size.height) })
  const { detection } = work
  const landmarks = manifest.result.landmarks ? (detection.keypoints ?? []).map(clampPoint) : []
  const polygon = manifest.result.maskPolygon === 'polygon' ? (detection.polygon ?? []).map(clampPoint) : []
  // The box is the detector's box grown to hold its landmarks (ear points of a face may lie
  // just outside the regressed box), clamped to the image.
  const b = detection.box
  const corners = [clampPoint({ x: b.x, y: b.y }), clampPoint({ x: b.x + b.width, y: b.y + b.height }), ...landmarks]
  const hull = boundingBox(corners)
  const x = Math.floor(hull.x), y = Math.floor(hull.y)
  const box = { x, y, width: Math.ceil(hull.x + hull.width) - x, height: Math.ceil(hull.y + hull.height) - y }
  return {
    box,
    confidence: work.confidence.map((c) => ({ label: c.label, confidence: round(c.confidence, 4) })),
    ...(hasLogic ? { bLogicResult: work.logic === true } : {}),
    landmark: landmarks.map((p) => ({ xRatio: round(p.x, 1), yRatio: round(p.y, 1) })),
    maskPolygon: polygon.map((p) => ({ xRatio: round(p.x / size.width, 5), yRatio: round(p.y / size.height, 5) })),
    ...(work.featurePreview ? { featurePreview: work.featurePreview.map((v) => round(v, 5)) } : {}),
  }
}
