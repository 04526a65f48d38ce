import { detectorInput } from '../../models/input-size.ts'
import type { PipelineManifest } from '../../models/manifest-schema.ts'
import type { DetectionResultCore } from '../../shared/inference/types.ts'
import type { Frame } from '../cameras/reader.ts'

/**
 * Frames are never decoded smaller than this: a snapshot falls back to the analysed frame
 * (docs/cameras-and-stream-tasks.md "Snapshots"), and a detector with a tiny input (BlazeFace, 256) would make it unreadable.
 */
const MIN_ANALYSIS_SIDE = 512

/**
 * The longest side a stream task's frames are decoded at (docs/cameras-and-stream-tasks.md "Stream tasks"): the largest
 * input side of its detectors when every detector letterboxes (the model sees no more pixels
 * than that), at least MIN_ANALYSIS_SIDE; null (the camera's own size) when a node reads the
 * frame's pixels itself — a crop, classifier or recognizer — or when the task recognizes faces,
 * which the recognition observer crops from the frame.
 */
export function analysisMaxSide(manifest: PipelineManifest | undefined, taskConfig: { recognition?: unknown; detectorInputSize?: number }): number | null {
  if (!manifest || taskConfig.recognition) return null
  let side = MIN_ANALYSIS_SIDE
  for (const node of manifest.nodes) {
    if (node.action === 'logic') continue
    if (node.action !== 'detector' || node.input.resize !== 'letterbox') return null
    const { input } = detectorInput(node, taskConfig)
    side = Math.max(side, input.width ?? 0, input.height ?? 0)
  }
  return side
}

/**
 * The result of a detection on a shrunk frame in the camera's own pixels: boxes and
 * landmarks (pixel values, spec 2.6) scaled back; polygons are ratios and stay.
 */
export function inSourcePixels(result: DetectionResultCore, frame: Frame): DetectionResultCore {
  const sx = frame.source.width / frame.width
  const sy = frame.source.height / frame.height
  if (sx === 1 && sy === 1) return result
  return {
    ...result,
    areaList: result.areaList.map((area) => ({
      ...area,
      targetList: area.targetList.map((target) => ({
        ...target,
        box: { x: Math.round(target.box.x * sx), y: Math.round(target.box.y * sy), width: Math.round(target.box.width * sx), height: Math.round(target.box.height * sy) },
        landmark: target.landmark.map((p) => ({ xRatio: Math.round(p.xRatio * sx), yRatio: Math.round(p.yRatio * sy) })),
      })),
    })),
  }
}

/** A box in the camera's pixels drawn on the frame as analysed (possibly smaller). */
export function inFramePixels(box: { x: number; y: number; width: number; height: number }, frame: Frame): { x: number; y: number; width: number; height: number } {
  const scale = frame.width / frame.source.width
  return { x: Math.round(box.x * scale), y: Math.round(box.y * scale), width: Math.round(box.width * scale), height: Math.round(box.height * scale) }
}

/**
 * Whether a task's frames may be detected on motion regions (runtime/streams/regions.ts): the
 * pipeline's result must not depend on the image as a whole — no areas of the task
 * (`taskConfig.regions`, polygons in ratios of the image), no mask polygons (ratios too), no
 * logic node (its trigger counts the targets of a whole area), no recognizer of the whole image. Returns the side below which a
 * crop is not cut (the detectors' largest input side), or null: the whole frame always.
 */
export function regionInputSide(manifest: PipelineManifest | undefined, taskConfig: { regions?: unknown[]; detectorInputSize?: number }): number | null {
  if (!manifest || (taskConfig.regions?.length ?? 0) > 0 || manifest.result.maskPolygon !== 'none') return null
  let side = 0
  for (const node of manifest.nodes) {
    // A recognizer without `from` describes the image itself.
    if (node.action === 'logic' || (node.action === 'recognizer' && node.from === undefined)) return null
    if (node.action === 'detector') {
      // The task's own input size (taskConfig.detectorInputSize, models/input-size.ts).
      const { input } = detectorInput(node, taskConfig)
      side = Math.max(side, input.width ?? 0, input.height ?? 0)
    }
  }
  return side > 0 ? side : null
}
