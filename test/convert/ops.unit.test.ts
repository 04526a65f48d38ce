/**
 * Op mappings checked one by one on small synthetic graphs against TF.js (CPU backend),
 * including ops and attribute variants that the shipped models do not use.
 */
import * as ort from 'onnxruntime-node'
import { describe, expect, it } from 'vitest'
import { convertTfGraph } from '../../models/convert/convert.ts'
import type { ConstTensor, TfNode } from '../../models/convert/tfjs-graph.ts'
import { firstMismatch, seededUniform } from '../../models/convert/verify/compare.ts'
import { loadReferenceModel, runReference } from '../../models/convert/verify/tfjs-reference.ts'
import { attr, floats, floatT, ints, placeholder, syntheticGraph } from './synthetic-graph.ts'

interface Case {
  name: string
  input: number[]
  nodes: TfNode[]
  consts?: Record<string, ConstTensor>
  /** Input values in [-1, 1) unless set. */
  positive?: boolean
}

const conv = (padding: string, extra: TfNode['attr'] = {}): TfNode['attr'] => ({ ...floatT, padding: attr.s(padding), strides: attr.ints([1, 1, 1, 1]), dilations: attr.ints([1, 1, 1, 1]), data_format: attr.s('NHWC'), ...extra })

const cases: Case[] = [
  {
    name: 'Conv2D with dilations and SAME padding',
    input: [1, 9, 9, 3],
    nodes: [{ name: 'y', op: 'Conv2D', input: ['x', 'w'], attr: conv('SAME', { dilations: attr.ints([1, 2, 2, 1]) }) }],
    consts: { w: floats([3, 3, 3, 4], 1) },
  },
  {
    name: 'Conv2D with EXPLICIT padding and stride 2',
    input: [1, 8, 8, 2],
    nodes: [{ name: 'y', op: 'Conv2D', input: ['x', 'w'], attr: conv('EXPLICIT', { strides: attr.ints([1, 2, 2, 1]), explicit_paddings: attr.ints([0, 0, 1, 2, 2, 1, 0, 0]) }) }],
    consts: { w: floats([3, 3, 2, 3], 2) },
  },
  {
    name: '_FusedConv2D with BiasAdd + Prelu',
    input: [1, 6, 6, 2],
    nodes: [{ name: 'y', op: '_FusedConv2D', input: ['x', 'w', 'bias', 'alpha'], attr: conv('VALID', { fused_ops: attr.strs(['BiasAdd', 'Prelu']), num_args: attr.i(2) }) }],
    consts: { w: floats([3, 3, 2, 4], 3), bias: floats([4], 4), alpha: floats([4], 5) },
  },
  {
    name: 'FusedDepthwiseConv2dNative with channel multiplier 2 and Relu6, stride 2',
    input: [1, 7, 7, 3],
    nodes: [{ name: 'y', op: 'FusedDepthwiseConv2dNative', input: ['x', 'w', 'bias'], attr: conv('SAME', { strides: attr.ints([1, 2, 2, 1]), fused_ops: attr.strs(['BiasAdd', 'Relu6']), num_args: attr.i(1) }) }],
    consts: { w: floats([3, 3, 3, 2], 6), bias: floats([6], 7) },
  },
  {
    name: 'Conv2DBackpropInput with VALID padding, stride 2',
    input: [1, 4, 4, 3],
    nodes: [{ name: 'y', op: 'Conv2DBackpropInput', input: ['sizes', 'w', 'x'], attr: conv('VALID', { strides: attr.ints([1, 2, 2, 1]) }) }],
    consts: { sizes: ints([1, 9, 9, 2]), w: floats([3, 3, 2, 3], 8) },
  },
  {
    name: 'Conv2DBackpropInput with SAME padding, stride 2, odd output',
    input: [1, 4, 4, 3],
    nodes: [{ name: 'y', op: 'Conv2DBackpropInput', input: ['sizes', 'w', 'x'], attr: conv('SAME', { strides: attr.ints([1, 2, 2, 1]) }) }],
    consts: { sizes: ints([1, 7, 7, 2]), w: floats([3, 3, 2, 3], 9) },
  },
  {
    name: 'MaxPool SAME and AvgPool SAME (padding excluded from the mean)',
    input: [1, 7, 7, 2],
    nodes: [
      { name: 'm', op: 'MaxPool', input: ['x'], attr: { ...floatT, padding: attr.s('SAME'), ksize: attr.ints([1, 3, 3, 1]), strides: attr.ints([1, 2, 2, 1]) } },
      { name: 'y', op: 'AvgPool', input: ['m'], attr: { ...floatT, padding: attr.s('SAME'), ksize: attr.ints([1, 2, 2, 1]), strides: attr.ints([1, 1, 1, 1]) } },
    ],
  },
  {
    name: 'MaxPool and AvgPool SAME with stride 1, even kernel',
    input: [1, 5, 6, 2],
    nodes: [
      { name: 'm', op: 'MaxPool', input: ['x'], attr: { ...floatT, padding: attr.s('SAME'), ksize: attr.ints([1, 2, 4, 1]), strides: attr.ints([1, 1, 1, 1]) } },
      { name: 'y', op: 'AvgPool', input: ['m'], attr: { ...floatT, padding: attr.s('SAME'), ksize: attr.ints([1, 3, 2, 1]), strides: attr.ints([1, 1, 1, 1]) } },
    ],
  },
  {
    name: 'DepthToSpace block 2',
    input: [1, 3, 3, 8],
    nodes: [{ name: 'y', op: 'DepthToSpace', input: ['x'], attr: { ...floatT, block_size: attr.i(2), data_format: attr.s('NHWC') } }],
  },
  {
    name: 'ResizeBilinear with align_corners',
    input: [1, 4, 5, 2],
    nodes: [{ name: 'y', op: 'ResizeBilinear', input: ['x', 'size'], attr: { ...floatT, align_corners: attr.b(true), half_pixel_centers: attr.b(false) } }],
    consts: { size: ints([7, 9]) },
  },
  {
    name: 'ResizeBilinear asymmetric',
    input: [1, 4, 5, 2],
    nodes: [{ name: 'y', op: 'ResizeBilinear', input: ['x', 'size'], attr: { ...floatT, align_corners: attr.b(false), half_pixel_centers: attr.b(false) } }],
    consts: { size: ints([8, 10]) },
  },
  {
    name: 'ResizeNearestNeighbor with half_pixel_centers, upscale and downscale',
    input: [1, 4, 6, 2],
    nodes: [
      { name: 'u', op: 'ResizeNearestNeighbor', input: ['x', 'up'], attr: { ...floatT, align_corners: attr.b(false), half_pixel_centers: attr.b(true) } },
      { name: 'y', op: 'ResizeNearestNeighbor', input: ['u', 'down'], attr: { ...floatT, align_corners: attr.b(false), half_pixel_centers: attr.b(true) } },
    ],
    consts: { up: ints([9, 11]), down: ints([5, 4]) },
  },
  {
    name: 'ResizeNearestNeighbor asymmetric',
    input: [1, 4, 6, 2],
    nodes: [{ name: 'y', op: 'ResizeNearestNeighbor', input: ['x', 'size'], attr: { ...floatT, align_corners: attr.b(false), half_pixel_centers: attr.b(false) } }],
    consts: { size: ints([7, 5]) },
  },
  {
    name: 'PadV2 with a constant value, MirrorPad REFLECT',
    input: [1, 4, 4, 2],
    nodes: [
      { name: 'p', op: 'PadV2', input: ['x', 'pads', 'value'], attr: floatT },
      { name: 'y', op: 'MirrorPad', input: ['p', 'pads'], attr: { ...floatT, mode: attr.s('REFLECT') } },
    ],
    consts: { pads: ints([0, 0, 1, 2, 2, 1, 0, 0], [4, 2]), value: floats([], 10) },
  },
  {
    // The ops only the no-longer-converted NanoDet and MobileFaceNet used.
    name: 'Pad with SparseToDense paddings (folded), Transpose, SplitV, Abs',
    input: [1, 4, 4, 2],
    nodes: [
      { name: 'pads', op: 'SparseToDense', input: ['padAt', 'padShape', 'padBy', 'zero'], attr: { T: attr.type('DT_INT32'), Tindices: attr.type('DT_INT32'), validate_indices: attr.b(true) } },
      { name: 'p', op: 'Pad', input: ['x', 'pads'], attr: floatT },
      { name: 't', op: 'Transpose', input: ['p', 'perm'], attr: floatT },
      { name: 's', op: 'SplitV', input: ['t', 'sizes', 'axis3'], attr: { ...floatT, num_split: attr.i(2) } },
      { name: 'd', op: 'Sub', input: ['s', 's:1'], attr: floatT },
      { name: 'y', op: 'Abs', input: ['d'], attr: floatT },
    ],
    consts: { padAt: ints([1, 0, 2, 1], [2, 2]), padShape: ints([4, 2]), padBy: ints([1, 2]), zero: ints([0], []), perm: ints([0, 2, 1, 3]), sizes: ints([1, 1]), axis3: ints([3], []) },
  },
  {
    name: 'Split, Pack, ConcatV2, Squeeze, ExpandDims',
    input: [2, 6, 3],
    nodes: [
      { name: 's', op: 'Split', input: ['axis1', 'x'], attr: { ...floatT, num_split: attr.i(3) } },
      { name: 'p', op: 'Pack', input: ['s', 's:2'], attr: { ...floatT, axis: attr.i(1), N: attr.i(2) } },
      { name: 'c', op: 'ConcatV2', input: ['p', 'p', 'axisNeg1'], attr: { ...floatT, N: attr.i(2) } },
      { name: 'e', op: 'ExpandDims', input: ['c', 'axis0'], attr: floatT },
      { name: 'y', op: 'Squeeze', input: ['e'], attr: { ...floatT, squeeze_dims: attr.ints([0]) } },
    ],
    consts: { axis0: ints([0], []), axis1: ints([1], []), axisNeg1: ints([-1], []) },
  },
  {
    name: 'StridedSlice with masks, negative stride and shrink',
    input: [2, 6, 5],
    nodes: [
      { name: 'a', op: 'StridedSlice', input: ['x', 'b1', 'e1', 's1'], attr: { ...floatT, begin_mask: attr.i(1), end_mask: attr.i(5), shrink_axis_mask: attr.i(0), ellipsis_mask: attr.i(0), new_axis_mask: attr.i(0) } },
      { name: 'y', op: 'StridedSlice', input: ['a', 'b2', 'e2', 's2'], attr: { ...floatT, begin_mask: attr.i(0), end_mask: attr.i(0), shrink_axis_mask: attr.i(1), ellipsis_mask: attr.i(0), new_axis_mask: attr.i(0) } },
    ],
    consts: { b1: ints([0, 5, 1]), e1: ints([0, 0, 0]), s1: ints([1, -2, 2]), b2: ints([1, 0, 0]), e2: ints([2, 3, 3]), s2: ints([1, 1, 1]) },
  },
  {
    name: 'Shape → StridedSlice → Pack → Reshape on a computed tensor',
    input: [2, 3, 4],
    nodes: [
      { name: 'r', op: 'Relu', input: ['x'], attr: floatT },
      { name: 'shape', op: 'Shape', input: ['r'], attr: { ...floatT, out_type: attr.type('DT_INT32') } },
      { name: 'batch', op: 'StridedSlice', input: ['shape', 'b', 'e', 's'], attr: { T: attr.type('DT_INT32'), begin_mask: attr.i(0), end_mask: attr.i(0), shrink_axis_mask: attr.i(1), ellipsis_mask: attr.i(0), new_axis_mask: attr.i(0) } },
      { name: 'target', op: 'Pack', input: ['batch', 'minus1'], attr: { T: attr.type('DT_INT32'), axis: attr.i(0), N: attr.i(2) } },
      { name: 'y', op: 'Reshape', input: ['r', 'target'], attr: floatT },
    ],
    consts: { b: ints([0]), e: ints([1]), s: ints([1]), minus1: ints([-1], []) },
  },
  {
    name: 'Reductions with and without keep_dims',
    input: [2, 3, 4],
    nodes: [
      { name: 'm', op: 'Mean', input: ['x', 'ax12'], attr: { ...floatT, keep_dims: attr.b(true) } },
      { name: 's', op: 'Sum', input: ['x', 'ax2'], attr: { ...floatT, keep_dims: attr.b(false) } },
      { name: 'mx', op: 'Max', input: ['s', 'ax1'], attr: { ...floatT, keep_dims: attr.b(false) } },
      { name: 'r', op: 'Reshape', input: ['m', 'shape'], attr: floatT },
      { name: 'y', op: 'AddV2', input: ['r', 'mx'], attr: floatT },
    ],
    consts: { ax12: ints([1, 2]), ax2: ints([2], []), ax1: ints([1], []), shape: ints([-1]) },
  },
  {
    name: 'elementwise: Elu, Tanh, LeakyRelu, Square, Rsqrt, RealDiv, Maximum, Minimum, Sub, AddN',
    input: [2, 5],
    positive: true,
    nodes: [
      { name: 'a', op: 'Elu', input: ['x'], attr: floatT },
      { name: 'b', op: 'Tanh', input: ['a'], attr: floatT },
      { name: 'c', op: 'LeakyRelu', input: ['b'], attr: { ...floatT, alpha: attr.f(0.3) } },
      { name: 'd', op: 'Square', input: ['c'], attr: floatT },
      { name: 'e', op: 'Rsqrt', input: ['x'], attr: floatT },
      { name: 'f', op: 'RealDiv', input: ['d', 'e'], attr: floatT },
      { name: 'g', op: 'Maximum', input: ['f', 'e'], attr: floatT },
      { name: 'h', op: 'Minimum', input: ['g', 'c'], attr: floatT },
      { name: 'i', op: 'Sub', input: ['h', 'x'], attr: floatT },
      { name: 'y', op: 'AddN', input: ['i', 'a', 'b'], attr: { ...floatT, N: attr.i(3) } },
    ],
  },
  {
    name: '_FusedMatMul with transpose_b, BiasAdd + Relu; Softmax',
    input: [3, 4],
    nodes: [
      { name: 'm', op: '_FusedMatMul', input: ['x', 'w', 'bias'], attr: { ...floatT, transpose_a: attr.b(false), transpose_b: attr.b(true), fused_ops: attr.strs(['BiasAdd', 'Relu']), num_args: attr.i(1) } },
      { name: 'y', op: 'Softmax', input: ['m'], attr: floatT },
    ],
    consts: { w: floats([5, 4], 11), bias: floats([5], 12) },
  },
]

describe('op mappings agree with TF.js', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const graph = syntheticGraph([placeholder('x', c.input), ...c.nodes], c.consts ?? {})
      const converted = convertTfGraph(graph, c.name)
      expect(converted.outputs).toEqual(['y'])
      const n = c.input.reduce((a, b) => a * b, 1)
      const data = Float32Array.from(seededUniform(n, 5), (v) => (c.positive ? v + 0.1 : v * 2 - 1))
      const reference = await loadReferenceModel(graph)
      const [expected] = await runReference(reference, 'x', c.input, data, ['y'])
      reference.dispose()
      const session = await ort.InferenceSession.create(converted.onnx)
      const actual = (await session.run({ x: new ort.Tensor('float32', data, c.input) })).y!
      await session.release()
      expect(actual.dims).toEqual(expected!.dims)
      expect(firstMismatch(expected!.data, actual.data as Float32Array)).toBeUndefined()
    })
  }
})
