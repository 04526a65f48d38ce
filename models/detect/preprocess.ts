/** Builds a detector's input tensor from RGB pixels already resized to the spec's square size. */
import type { InputSpec } from './types.ts'

/** `rgb`: size × size × 3 interleaved bytes. Returns the data and dims for the model input. */
export function inputTensor(rgb: Uint8Array, spec: InputSpec): { data: Float32Array; dims: number[] } {
  const { size, scale } = spec
  const plane = size * size
  if (rgb.length !== plane * 3) throw new RangeError(`expected ${plane * 3} RGB bytes for ${size}×${size}, got ${rgb.length}`)
  const data = new Float32Array(plane * 3)
  if (spec.layout === 'nhwc') {
    for (let i = 0; i < data.length; i++) data[i] = rgb[i]! * scale
    return { data, dims: [1, size, size, 3] }
  }
  for (let p = 0; p < plane; p++) for (let c = 0; c < 3; c++) data[c * plane + p] = rgb[p * 3 + c]! * scale
  return { data, dims: [1, 3, size, size] }
}
