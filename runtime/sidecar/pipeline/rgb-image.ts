import sharp from 'sharp'
import type { InputSpec } from '../../../models/manifest-schema.ts'

/** A decoded image: 8-bit RGB, row-major, no padding. Every pipeline stage works on this. */
export interface RgbImage {
  data: Buffer
  width: number
  height: number
}

/** A model input tensor and the mapping of its pixel coordinates back to the source image. */
export interface PreparedInput {
  data: Float32Array
  dims: number[]
  /** Size of the tensor's image content (without padding). */
  contentWidth: number
  contentHeight: number
  /** source x = input x × scaleX (likewise y). */
  scaleX: number
  scaleY: number
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

/** Target content size and tensor size for an input spec (manifest-schema.ts, InputSpec). */
export function inputGeometry(width: number, height: number, spec: InputSpec) {
  switch (spec.resize) {
    case 'stretch': {
      const w = spec.width ?? width, h = spec.height ?? height
      return { contentWidth: w, contentHeight: h, tensorWidth: w, tensorHeight: h }
    }
    case 'letterbox': {
      const tw = spec.width ?? width, th = spec.height ?? height
      const s = Math.min(tw / width, th / height)
      return { contentWidth: clamp(Math.round(width * s), 1, tw), contentHeight: clamp(Math.round(height * s), 1, th), tensorWidth: tw, tensorHeight: th }
    }
    case 'fit-multiple': {
      const m = spec.multipleOf ?? 32
      const ratio = Math.min(1, (spec.limitSideLen ?? 960) / Math.max(width, height))
      const w = Math.max(m, Math.round((width * ratio) / m) * m)
      const h = Math.max(m, Math.round((height * ratio) / m) * m)
      return { contentWidth: w, contentHeight: h, tensorWidth: w, tensorHeight: h }
    }
    case 'fixed-height': {
      const h = spec.height ?? 48
      const w = clamp(Math.ceil((h * width) / height), spec.minWidth ?? 1, spec.maxWidth ?? 4096)
      const tw = spec.width !== undefined ? Math.max(spec.width, w) : w
      return { contentWidth: spec.width !== undefined ? Math.min(w, spec.width) : w, contentHeight: h, tensorWidth: tw, tensorHeight: h }
    }
  }
}

/**
 * Resizes with sharp (libvips, off the JS thread) and writes the normalized tensor in the
 * layout the model wants. Padding stays 0 after normalization, as PaddleOCR and MediaPipe do.
 */
export async function prepareInput(image: RgbImage, spec: InputSpec): Promise<PreparedInput> {
  const g = inputGeometry(image.width, image.height, spec)
  const pixels = g.contentWidth === image.width && g.contentHeight === image.height
    ? image.data
    : await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
      .resize(g.contentWidth, g.contentHeight, { fit: 'fill', kernel: 'linear' })
      .raw()
      .toBuffer()
  const { tensorWidth: tw, tensorHeight: th } = g
  const data = new Float32Array(tw * th * 3)
  const order = spec.channelOrder === 'RGB' ? [0, 1, 2] : [2, 1, 0]
  const { mean, std } = spec.normalization
  const nchw = spec.layout === 'NCHW'
  const plane = tw * th
  const scales = { scaleX: image.width / g.contentWidth, scaleY: image.height / g.contentHeight }
  if (spec.grayWeights) return { ...grayInput(pixels, g, spec, spec.grayWeights, order), ...scales }
  for (let c = 0; c < 3; c++) {
    const src = order[c]!
    const m = mean[c]!, inv = 1 / std[c]!
    for (let y = 0; y < g.contentHeight; y++) {
      let s = y * g.contentWidth * 3 + src
      for (let x = 0; x < g.contentWidth; x++, s += 3) {
        const v = (pixels[s]! - m) * inv
        if (nchw) data[c * plane + y * tw + x] = v
        else data[(y * tw + x) * 3 + c] = v
      }
    }
  }
  const dims = nchw ? [1, 3, th, tw] : [1, th, tw, 3]
  return { data, dims, contentWidth: g.contentWidth, contentHeight: g.contentHeight,
    scaleX: image.width / g.contentWidth, scaleY: image.height / g.contentHeight }
}

/** One channel = Σ weight × normalized channel (e.g. BT.601 luma for the emotion model). */
function grayInput(pixels: Buffer, g: ReturnType<typeof inputGeometry>, spec: InputSpec, weights: number[], order: number[]) {
  const { tensorWidth: tw, tensorHeight: th } = g
  const data = new Float32Array(tw * th)
  const { mean, std } = spec.normalization
  for (let y = 0; y < g.contentHeight; y++)
    for (let x = 0; x < g.contentWidth; x++) {
      const s = (y * g.contentWidth + x) * 3
      let v = 0
      for (let c = 0; c < 3; c++) v += weights[c]! * ((pixels[s + order[c]!]! - mean[c]!) / std[c]!)
      data[y * tw + x] = v
    }
  const dims = spec.layout === 'NCHW' ? [1, 1, th, tw] : [1, th, tw, 1]
  return { data, dims, contentWidth: g.contentWidth, contentHeight: g.contentHeight }
}

/** Turns an image by 180 degrees (direction-classifier effect). */
export function rotate180(image: RgbImage): RgbImage {
  const out = Buffer.allocUnsafe(image.data.length)
  const n = image.width * image.height
  for (let i = 0; i < n; i++) {
    const s = i * 3, d = (n - 1 - i) * 3
    out[d] = image.data[s]!; out[d + 1] = image.data[s + 1]!; out[d + 2] = image.data[s + 2]!
  }
  return { data: out, width: image.width, height: image.height }
}
