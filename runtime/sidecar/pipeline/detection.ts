import type { Box, Point } from './geometry.ts'

/** A detector output in source-image pixels, before it becomes a spec 2.6 target. */
export interface Detection {
  box: Box
  score: number
  classIndex: number
  keypoints?: Point[]
  polygon?: Point[]
}
