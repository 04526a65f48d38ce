/**
 * Constant folding: a TF node whose inputs are all known at conversion time and whose op
 * has an evaluator here is computed by the converter, and no ONNX node is emitted for it
 * (shape arithmetic, `SparseToDense` of constants, `Pack` of constants, ...).
 */
import { attrInt, type ConstTensor, type TfDtype, type TfNode } from '../tfjs-graph.ts'
import { broadcast, makeConst, sizeOf, sliceConst, stridedSliceSpec, transposeConst } from './tensor-math.ts'

export type Evaluator = (inputs: ConstTensor[], node: TfNode) => ConstTensor[]

/** TF DataType enum name → the dtype TF.js keeps it in (int64 becomes int32, as in TF.js). */
export function tfDtype(type: string | undefined): TfDtype {
  switch (type) {
    case 'DT_FLOAT':
    case 'DT_HALF':
    case 'DT_DOUBLE':
      return 'float32'
    case 'DT_INT32':
    case 'DT_INT64':
    case 'DT_INT16':
    case 'DT_INT8':
    case 'DT_UINT8':
      return 'int32'
    case 'DT_BOOL':
      return 'bool'
    default:
      throw new Error(`data type ${type} is not supported`)
  }
}

const values = (t: ConstTensor) => Array.from(t.data)
const binary = (fn: (x: number, y: number) => number, intResult?: (x: number, y: number) => number): Evaluator => ([a, b]) => [
  broadcast(a!, b!, a!.dtype, a!.dtype === 'int32' && intResult ? intResult : fn),
]
const axisOf = (axis: number, rank: number) => (axis < 0 ? axis + rank : axis)

export const evaluators: Record<string, Evaluator> = {
  Identity: ([x]) => [x!],
  Cast: ([x], node) => {
    const to = tfDtype(node.attr?.DstT?.type)
    return [makeConst(to, x!.shape, to === 'int32' ? values(x!).map(Math.trunc) : values(x!))]
  },
  Shape: ([x]) => [makeConst('int32', [x!.shape.length], x!.shape)],
  Add: binary((x, y) => x + y),
  AddV2: binary((x, y) => x + y),
  Sub: binary((x, y) => x - y),
  Mul: binary((x, y) => x * y),
  RealDiv: binary((x, y) => x / y),
  FloorDiv: binary((x, y) => Math.floor(x / y)),
  Maximum: binary(Math.max),
  Minimum: binary(Math.min),
  Reshape: ([x, shape]) => {
    const dims = values(shape!)
    const known = dims.filter((d) => d !== -1).reduce((a, b) => a * b, 1)
    return [{ ...x!, shape: dims.map((d) => (d === -1 ? x!.data.length / known : d)) }]
  },
  ExpandDims: ([x, axis]) => {
    const shape = [...x!.shape]
    shape.splice(axisOf(values(axis!)[0]!, shape.length + 1), 0, 1)
    return [{ ...x!, shape }]
  },
  Squeeze: ([x], node) => {
    const dims = (node.attr?.squeeze_dims?.list?.i ?? node.attr?.axis?.list?.i ?? []).map(Number).map((a) => axisOf(a, x!.shape.length))
    return [{ ...x!, shape: x!.shape.filter((d, i) => (dims.length ? !dims.includes(i) : d !== 1)) }]
  },
  Transpose: ([x, perm]) => [transposeConst(x!, values(perm!))],
  Pack: (inputs, node) => {
    const rank = inputs[0]!.shape.length
    const axis = axisOf(attrInt(node.attr?.axis) ?? 0, rank + 1)
    if (axis !== 0) throw new Error(`Pack on axis ${axis} of constants is not supported`)
    return [makeConst(inputs[0]!.dtype, [inputs.length, ...inputs[0]!.shape], inputs.flatMap(values))]
  },
  ConcatV2: (inputs) => {
    const parts = inputs.slice(0, -1)
    const axis = axisOf(values(inputs.at(-1)!)[0]!, parts[0]!.shape.length)
    if (axis !== 0) throw new Error(`ConcatV2 on axis ${axis} of constants is not supported`)
    return [makeConst(parts[0]!.dtype, [parts.reduce((n, p) => n + p.shape[0]!, 0), ...parts[0]!.shape.slice(1)], parts.flatMap(values))]
  },
  StridedSlice: ([x, begin, end, strides], node) => {
    const mask = (name: string) => attrInt(node.attr?.[name]) ?? 0
    const masks = Object.fromEntries(['begin_mask', 'end_mask', 'ellipsis_mask', 'new_axis_mask', 'shrink_axis_mask'].map((m) => [m, mask(m)]))
    return [sliceConst(x!, stridedSliceSpec(x!.shape.length, values(begin!), values(end!), values(strides!), masks))]
  },
  /** SparseToDense(indices, output_shape, values, default) */
  SparseToDense: ([indices, outputShape, sparseValues, fill]) => {
    const shape = values(outputShape!)
    const out = new Array<number>(sizeOf(shape)).fill(fill!.data[0]!)
    const rank = shape.length
    const count = indices!.shape.length === 0 ? 1 : indices!.shape[0]!
    const stride = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1))
    for (let n = 0; n < count; n++) {
      let flat = 0
      for (let d = 0; d < rank; d++) flat += indices!.data[n * rank + d]! * stride[d]!
      out[flat] = sparseValues!.data.length === 1 ? sparseValues!.data[0]! : sparseValues!.data[n]!
    }
    return [makeConst(sparseValues!.dtype, shape, out)]
  },
}
