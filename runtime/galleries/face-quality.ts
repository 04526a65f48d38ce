import { loadSharp } from '../load-sharp.ts'
import type { DescribedRegion } from '../../shared/galleries/types.ts'

/**
 * What makes a face useful as a gallery picture (docs/galleries.md "Enrolment quality"),
 * measured on a described face:
 * - `eyeDistancePx`: distance of the eyes in the image's pixels (BlazeFace keypoints 0 and 1):
 *   the face's size, independent of how tight the detector's box is;
 * - `turn`: how far the nose tip (keypoint 2) lies off the middle of the eyes, along the eye
 *   line, in eye distances (0 frontal; grows as the head turns left or right);
 * - `sharpness`: standard deviation of the Laplacian of the stored picture (the aligned face)
 *   in grey levels; low for a blurred or smoothed face.
 */
export interface FaceQuality {
  eyeDistancePx: number
  turn: number
  sharpness: number
}

const r2 = (v: number) => Math.round(v * 100) / 100

/**
 * The limits of a gallery face, from the faces of shared/media/faces and face-api's sample
 * photos (`bench/face-quality.ts`, docs/galleries.md "Enrolment quality"): every usable face
 * there passes with a margin (eye distance ≥ 33 px, turn ≤ 0.69, sharpness ≥ 3.64).
 */
export const FACE_QUALITY_LIMITS = { turn: 1.0, eyeDistancePx: 24, sharpness: 3.0 } as const

/**
 * The error a face fails first (turned, then too small: a turned face's eyes also lie close;
 * then blurred), with the measured value against its limit; null when it passes.
 */
export function qualityRefusal(q: FaceQuality): { error: 'GalleryFaceTurned' | 'GalleryFaceTooSmall' | 'GalleryFaceBlurred'; measure: keyof FaceQuality; measured: number; limit: number } | null {
  const L = FACE_QUALITY_LIMITS
  if (!(q.turn <= L.turn)) return { error: 'GalleryFaceTurned', measure: 'turn', measured: q.turn, limit: L.turn }
  if (q.eyeDistancePx < L.eyeDistancePx) return { error: 'GalleryFaceTooSmall', measure: 'eyeDistancePx', measured: q.eyeDistancePx, limit: L.eyeDistancePx }
  if (q.sharpness < L.sharpness) return { error: 'GalleryFaceBlurred', measure: 'sharpness', measured: q.sharpness, limit: L.sharpness }
  return null
}

export async function faceQuality(region: Pick<DescribedRegion, 'landmark' | 'picture'>): Promise<FaceQuality> {
  const [a, b, nose] = region.landmark.map((p) => ({ x: p.xRatio, y: p.yRatio }))
  if (!a || !b || !nose || !region.picture) return { eyeDistancePx: 0, turn: Infinity, sharpness: 0 }
  const ex = b.x - a.x, ey = b.y - a.y
  const eyes = Math.hypot(ex, ey) || 1
  const along = ((nose.x - (a.x + b.x) / 2) * ex + (nose.y - (a.y + b.y) / 2) * ey) / eyes
  return { eyeDistancePx: r2(eyes), turn: r2(Math.abs(along) / eyes), sharpness: r2(await laplacianStd(region.picture)) }
}

/** Standard deviation of the 4-neighbour Laplacian of a picture's grey levels (its border left out). */
async function laplacianStd(picture: Buffer): Promise<number> {
  const sharp = await loadSharp()
  const { data, info } = await sharp(picture).greyscale().raw().toBuffer({ resolveWithObject: true })
  const { width: w, height: h } = info
  let sum = 0, sq = 0, n = 0
  for (let y = 1; y < h - 1; y++)
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x
      const v = data[i - 1]! + data[i + 1]! + data[i - w]! + data[i + w]! - 4 * data[i]!
      sum += v; sq += v * v; n++
    }
  return n ? Math.sqrt(Math.max(0, sq / n - (sum / n) ** 2)) : 0
}
