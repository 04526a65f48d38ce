import type { MotionDetector } from '../../runtime/streams/motion.ts'

export const SCENE = { width: 640, height: 360 }

/** A 640 × 360 dark frame (grey 50) with bright (200) rectangles: the default 64 × 36 grid makes 10 px cells. */
export function scene(...rects: { x: number; y: number; width: number; height: number }[]): Uint8Array {
  const { width, height } = SCENE
  const rgb = new Uint8Array(width * height * 3).fill(50)
  for (const r of rects)
    for (let y = r.y; y < r.y + r.height; y++) rgb.fill(200, (y * width + r.x) * 3, (y * width + r.x + r.width) * 3)
  return rgb
}

/** Feeds frames 200 ms apart (5 fps, as a stream task takes them) from `start` ms; their motion. */
export function feed(detector: MotionDetector, frames: Uint8Array[], start = 1000) {
  return frames.map((rgb, i) => detector.detect(rgb, SCENE.width, SCENE.height, start + i * 200))
}
