import type { Box, Point } from './geometry.ts'
import type { RgbImage } from './rgb-image.ts'

/**
 * Cuts a quadrilateral (corners top-left, top-right, bottom-right, bottom-left) out of the
 * image into an upright rectangle with bilinear sampling (PaddleOCR get_rotate_crop_image,
 * affine from three corners). Crops much taller than wide are turned a quarter so text
 * lines read left to right.
 */
export function cropQuad(image: RgbImage, quad: Point[], rotateTallerThan = Infinity): RgbImage {
  let [tl, tr, br, bl] = quad as [Point, Point, Point, Point]
  let width = Math.max(1, Math.round(Math.max(dist(tl, tr), dist(bl, br))))
  let height = Math.max(1, Math.round(Math.max(dist(tl, bl), dist(tr, br))))
  if (height / width >= rotateTallerThan) {
    // The four corners turn together; the bottom-right one is not read again.
    // eslint-disable-next-line no-useless-assignment
    ;[tl, tr, br, bl] = [tr, br, bl, tl]
    ;[width, height] = [height, width]
  }
  const out = Buffer.alloc(width * height * 3)
  const ux = (tr.x - tl.x) / width, uy = (tr.y - tl.y) / width
  const vx = (bl.x - tl.x) / height, vy = (bl.y - tl.y) / height
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const sx = tl.x + (x + 0.5) * ux + (y + 0.5) * vx - 0.5
      const sy = tl.y + (x + 0.5) * uy + (y + 0.5) * vy - 0.5
      sample(image, sx, sy, out, (y * width + x) * 3)
    }
  return { data: out, width, height }
}

/** Axis-aligned crop with `padding` × box size on each side, clamped to the image. */
export function cropBox(image: RgbImage, box: Box, padding = 0): RgbImage {
  const x0 = Math.max(0, Math.floor(box.x - box.width * padding)), y0 = Math.max(0, Math.floor(box.y - box.height * padding))
  const x1 = Math.min(image.width, Math.ceil(box.x + box.width * (1 + padding))), y1 = Math.min(image.height, Math.ceil(box.y + box.height * (1 + padding)))
  const width = Math.max(1, x1 - x0), height = Math.max(1, y1 - y0)
  const out = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height && y0 + y < image.height; y++)
    image.data.copy(out, y * width * 3, ((y0 + y) * image.width + x0) * 3, ((y0 + y) * image.width + Math.min(x1, image.width)) * 3)
  return { data: out, width, height }
}

/**
 * A face square turned so that the eyes lie level (either eye first): `scale` × the eye
 * distance wide, the eye line `eyeLine` × the side from its top, centred between the eyes.
 */
export function alignByEyes(image: RgbImage, a: Point, b: Point, scale: number, eyeLine: number): RgbImage {
  const [left, right] = a.x <= b.x ? [a, b] : [b, a]
  const d = Math.max(1, dist(left, right))
  const ux = (right.x - left.x) / d, uy = (right.y - left.y) / d
  // Down the face: u turned a quarter clockwise (image y grows downwards).
  const vx = -uy, vy = ux
  const side = scale * d
  const tl = { x: (left.x + right.x) / 2 - (ux * side) / 2 - vx * eyeLine * side, y: (left.y + right.y) / 2 - (uy * side) / 2 - vy * eyeLine * side }
  const tr = { x: tl.x + ux * side, y: tl.y + uy * side }
  return cropQuad(image, [tl, tr, { x: tr.x + vx * side, y: tr.y + vy * side }, { x: tl.x + vx * side, y: tl.y + vy * side }])
}

/** A similarity transform: output = [a −b; b a] · input + [tx, ty] (rotation, uniform scale, shift). */
export interface Similarity { a: number; b: number; tx: number; ty: number }

/**
 * The least-squares similarity transform taking `from` onto `to` (Umeyama 1991, without
 * reflection): how a face's keypoints are brought onto a model's canonical template.
 */
export function fitSimilarity(from: Point[], to: Point[]): Similarity {
  const n = Math.min(from.length, to.length)
  let fx = 0, fy = 0, tx = 0, ty = 0
  for (let i = 0; i < n; i++) { fx += from[i]!.x; fy += from[i]!.y; tx += to[i]!.x; ty += to[i]!.y }
  fx /= n; fy /= n; tx /= n; ty /= n
  let dot = 0, cross = 0, norm = 0
  for (let i = 0; i < n; i++) {
    const px = from[i]!.x - fx, py = from[i]!.y - fy, qx = to[i]!.x - tx, qy = to[i]!.y - ty
    dot += px * qx + py * qy
    cross += px * qy - py * qx
    norm += px * px + py * py
  }
  const a = norm > 0 ? dot / norm : 1, b = norm > 0 ? cross / norm : 0
  return { a, b, tx: tx - (a * fx - b * fy), ty: ty - (b * fx + a * fy) }
}

/**
 * The `width` × `height` image whose pixel (x, y) is the source at `toImage⁻¹(x, y)`:
 * a face warped onto a model's template (bilinear, borders repeated).
 */
export function warpSimilarity(image: RgbImage, toOutput: Similarity, width: number, height: number): RgbImage {
  const { a, b, tx, ty } = toOutput
  const det = a * a + b * b || 1
  // Inverse of [a −b; b a]: [a b; −b a] / det.
  const ia = a / det, ib = b / det
  const out = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const dx = x + 0.5 - tx, dy = y + 0.5 - ty
      sample(image, ia * dx + ib * dy - 0.5, -ib * dx + ia * dy - 0.5, out, (y * width + x) * 3)
    }
  return { data: out, width, height }
}

/**
 * A face brought onto a template of face points (dlib's face chip, get_face_chip_details):
 * `template` on the unit face square, that square padded by `padding` × its side on every
 * side and drawn `width` × `height` (a template point lands at (padding + p) / (1 + 2 padding)
 * × the side); `keypoints` are the face's points in the template's order.
 */
export function alignToTemplate(image: RgbImage, keypoints: Point[], template: readonly (readonly [number, number])[], padding: number, width: number, height: number, filter?: 'box'): RgbImage {
  const to = template.map(([x, y]) => ({ x: ((padding + x) / (1 + 2 * padding)) * width, y: ((padding + y) / (1 + 2 * padding)) * height }))
  const t = fitSimilarity(keypoints, to)
  if (filter !== 'box') return warpSimilarity(image, t, width, height)
  // dlib's extract_image_chip samples a downscaled image when the chip is much smaller than the
  // face; here the image box-averaged by ⌊shrink / 1.5⌋ when that is ≥ 2 (docs/galleries.md
  // "Alignment and measure, measured": bilinear sampling alone aliases a large face).
  const f = Math.floor(1 / Math.hypot(t.a, t.b) / 1.5)
  if (f < 2) return warpSimilarity(image, t, width, height)
  // Only the blocks under the chip (and one around it) are averaged, on the image's own f-grid.
  const det = t.a * t.a + t.b * t.b
  const corners = [[0, 0], [width, 0], [0, height], [width, height]].map(([x, y]) => {
    const dx = x! - t.tx, dy = y! - t.ty
    return { x: (t.a * dx + t.b * dy) / det, y: (-t.b * dx + t.a * dy) / det }
  })
  const cols = Math.floor(image.width / f), rows = Math.floor(image.height / f)
  const bx0 = clamp(Math.floor(Math.min(...corners.map((c) => c.x)) / f) - 1, 0, cols - 1), bx1 = clamp(Math.ceil(Math.max(...corners.map((c) => c.x)) / f) + 1, bx0 + 1, cols)
  const by0 = clamp(Math.floor(Math.min(...corners.map((c) => c.y)) / f) - 1, 0, rows - 1), by1 = clamp(Math.ceil(Math.max(...corners.map((c) => c.y)) / f) + 1, by0 + 1, rows)
  const small = boxShrink(image, f, bx0, by0, bx1 - bx0, by1 - by0)
  // A source pixel p = (bx0, by0)·f + f·q of the small image q: chip = t(p).
  const ox = bx0 * f, oy = by0 * f
  return warpSimilarity(small, { a: t.a * f, b: t.b * f, tx: t.a * ox - t.b * oy + t.tx, ty: t.b * ox + t.a * oy + t.ty }, width, height)
}

/** `cols` × `rows` blocks of `f` × `f` pixels from block (bx, by) on, each averaged (the image must hold them all). */
export function boxShrink(image: RgbImage, f: number, bx: number, by: number, cols: number, rows: number): RgbImage {
  const out = Buffer.alloc(cols * rows * 3)
  const sums = new Float64Array(cols * 3)
  const area = f * f
  for (let y = 0; y < rows; y++) {
    sums.fill(0)
    for (let dy = 0; dy < f; dy++) {
      const row = ((by + y) * f + dy) * image.width
      for (let x = 0; x < cols; x++)
        for (let dx = 0; dx < f; dx++) {
          const at = (row + (bx + x) * f + dx) * 3
          sums[x * 3] += image.data[at]!
          sums[x * 3 + 1] += image.data[at + 1]!
          sums[x * 3 + 2] += image.data[at + 2]!
        }
    }
    for (let i = 0; i < cols * 3; i++) out[y * cols * 3 + i] = Math.round(sums[i]! / area)
  }
  return { data: out, width: cols, height: rows }
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

const dist = (a: Point, b: Point) => Math.hypot(a.x - b.x, a.y - b.y)

function sample(image: RgbImage, x: number, y: number, out: Buffer, at: number) {
  const x0 = Math.floor(x), y0 = Math.floor(y), fx = x - x0, fy = y - y0
  for (let c = 0; c < 3; c++) {
    const p = (xx: number, yy: number) => {
      const cx = Math.min(image.width - 1, Math.max(0, xx)), cy = Math.min(image.height - 1, Math.max(0, yy))
      return image.data[(cy * image.width + cx) * 3 + c]!
    }
    const top = p(x0, y0) * (1 - fx) + p(x0 + 1, y0) * fx
    const bottom = p(x0, y0 + 1) * (1 - fx) + p(x0 + 1, y0 + 1) * fx
    out[at + c] = Math.round(top * (1 - fy) + bottom * fy)
  }
}
