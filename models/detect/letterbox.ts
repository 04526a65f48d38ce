/**
 * Letterboxing: the image is scaled to fit the detector's square input keeping its aspect
 * ratio, placed at the top-left corner, and the rest padded. Detectors here find more of
 * the people in a photo this way than when the image is stretched to the square.
 */
import type { Detection } from './types.ts'

export interface Letterbox {
  /** Size of the scaled image inside the square input, in pixels. */
  width: number
  height: number
  size: number
}

export function letterboxGeometry(imageWidth: number, imageHeight: number, size: number): Letterbox {
  const scale = Math.min(size / imageWidth, size / imageHeight)
  return { width: Math.round(imageWidth * scale), height: Math.round(imageHeight * scale), size }
}

/** Maps boxes normalized to the square input back to boxes normalized to the original image. */
export function unletterbox(detections: readonly Detection[], box: Letterbox): Detection[] {
  const fx = box.size / box.width
  const fy = box.size / box.height
  const clamp = (v: number) => Math.min(Math.max(v, 0), 1)
  return detections.map((d) => ({
    ...d,
    box: { x1: clamp(d.box.x1 * fx), y1: clamp(d.box.y1 * fy), x2: clamp(d.box.x2 * fx), y2: clamp(d.box.y2 * fy) },
  }))
}
