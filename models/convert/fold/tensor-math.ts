/** Small tensor arithmetic on conversion-time constants (weights and shape computations). */
import type { ConstTensor, TfDtype } from '../tfjs-graph.ts'

export const sizeOf = (shape: number[]) => shape.reduce((a, b) => a * b, 1)

export function makeConst(dtype: TfDtype, shape: number[], values: ArrayLike<number>): ConstTensor {
  const data = dtype === 'float32' ? Float32Array.from(values) : dtype === 'int32' ? Int32Array.from(values) : Uint8Array.from(values)
  return { dtype, shape, data }
}

function strides(shape: number[]): number[] {
  const s = new Array<number>(shape.length).fill(1)
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1]! * shape[i + 1]!
  return s
}

/** Visits every index of `shape` in row-major order. */
function forEachIndex(shape: number[], fn: (index: number[], flat: number) => void): void {
  const n = sizeOf(shape)
  const index = new Array<number>(shape.length).fill(0)
  for (let flat = 0; flat < n; flat++) {
    fn(index, flat)
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++index[d]! < shape[d]!) break
      index[d] = 0
    }
  }
}

export function transposeConst(t: ConstTensor, perm: number[]): ConstTensor {
  const shape = perm.map((p) => t.shape[p]!)
  const src = strides(t.shape)
  const out = new (t.data.constructor as Float32ArrayConstructor)(t.data.length)
  forEachIndex(shape, (index, flat) => {
    let o = 0
    for (let d = 0; d < perm.length; d++) o += index[d]! * src[perm[d]!]!
    out[flat] = t.data[o]!
  })
  return { dtype: t.dtype, shape, data: out }
}

/** Elementwise op with numpy broadcasting. */
export function broadcast(a: ConstTensor, b: ConstTensor, dtype: TfDtype, fn: (x: number, y: number) => number): ConstTensor {
  const rank = Math.max(a.shape.length, b.shape.length)
  const pad = (s: number[]) => [...new Array<number>(rank - s.length).fill(1), ...s]
  const [sa, sb] = [pad(a.shape), pad(b.shape)]
  const shape = sa.map((d, i) => Math.max(d, sb[i]!))
  const [ta, tb] = [strides(sa), strides(sb)]
  const values = new Array<number>(sizeOf(shape))
  forEachIndex(shape, (index, flat) => {
    let ia = 0
    let ib = 0
    for (let d = 0; d < rank; d++) {
      if (sa[d] !== 1) ia += index[d]! * ta[d]!
      if (sb[d] !== 1) ib += index[d]! * tb[d]!
    }
    values[flat] = fn(a.data[ia]!, b.data[ib]!)
  })
  return makeConst(dtype, shape, values)
}

/** Resolves TF StridedSlice masks into per-axis [begin, end, step] plus the axes to squeeze. */
export interface SliceSpec {
  begin: number[]
  end: number[]
  step: number[]
  shrink: number[]
}

export function stridedSliceSpec(rank: number, begin: number[], end: number[], step: number[], masks: Record<string, number>): SliceSpec {
  if (masks.ellipsis_mask || masks.new_axis_mask) throw new Error('StridedSlice with ellipsis_mask or new_axis_mask is not supported')
  const spec: SliceSpec = { begin: [], end: [], step: [], shrink: [] }
  for (let d = 0; d < rank; d++) {
    const s = d < step.length ? step[d]! : 1
    const bit = 1 << d
    const big = s > 0 ? Number.MAX_SAFE_INTEGER : -Number.MAX_SAFE_INTEGER
    let b = d < begin.length && !(masks.begin_mask! & bit) ? begin[d]! : s > 0 ? 0 : -1
    let e = d < end.length && !(masks.end_mask! & bit) ? end[d]! : big
    if (masks.shrink_axis_mask! & bit) {
      e = b === -1 ? big : b + 1
      spec.shrink.push(d)
    }
    if (d >= begin.length) [b, e] = [s > 0 ? 0 : -1, big]
    spec.begin.push(b)
    spec.end.push(e)
    spec.step.push(s)
  }
  return spec
}

export function sliceConst(t: ConstTensor, spec: SliceSpec): ConstTensor {
  const ranges = t.shape.map((dim, d) => {
    const s = spec.step[d]!
    const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), hi)
    const norm = (v: number) => (v < 0 ? v + dim : v)
    const b = s > 0 ? clamp(norm(spec.begin[d]!), 0, dim) : clamp(norm(spec.begin[d]!), -1, dim - 1)
    const e = s > 0 ? clamp(norm(spec.end[d]!), 0, dim) : clamp(spec.end[d]! <= -Number.MAX_SAFE_INTEGER ? -1 : norm(spec.end[d]!), -1, dim - 1)
    const idx: number[] = []
    for (let i = b; s > 0 ? i < e : i > e; i += s) idx.push(i)
    return idx
  })
  const shape = ranges.map((r) => r.length)
  const src = strides(t.shape)
  const values: number[] = []
  forEachIndex(shape, (index) => {
    let o = 0
    for (let d = 0; d < index.length; d++) o += ranges[d]![index[d]!]! * src[d]!
    values.push(t.data[o]!)
  })
  return makeConst(t.dtype, shape.filter((_, d) => !spec.shrink.includes(d)), values)
}
