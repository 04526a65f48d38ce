/** Shape and indexing ops. Axes stay TF's, since tensors keep TF's layout. */
import { attrInt } from '../tfjs-graph.ts'
import { stridedSliceSpec } from '../fold/tensor-math.ts'
import { ElemType } from '../onnx-builder.ts'
import type { OpContext, OpMapping } from '../context.ts'

const ints = (ctx: OpContext, i: number, what: string) => Array.from(ctx.requireConst(i, what).data)
const int64Input = (ctx: OpContext, i: number, what: string) => ctx.b.int64(`${ctx.node.name}/${what}`, ints(ctx, i, what))
const axisList = (ctx: OpContext) => (ctx.attr('squeeze_dims')?.list?.i ?? ctx.attr('axis')?.list?.i ?? []).map(Number)

export const shapeOps: Record<string, OpMapping> = {
  /** A constant target shape becomes an int64 initializer; a computed one is cast to int64. */
  Reshape: (ctx) => {
    const shape = ctx.constant(1) ? int64Input(ctx, 1, 'shape') : ctx.emit('Cast', [ctx.input(1)], { to: ElemType.int64 })[0]!
    return ctx.emit('Reshape', [ctx.input(0), shape])
  },
  /**
   * Shape of a computed tensor (the shape of a constant is folded): emitted as ONNX Shape,
   * which onnxruntime folds when the shape is static. TF.js keeps it as int32.
   */
  Shape: (ctx) => ctx.emit('Cast', ctx.emit('Shape', [ctx.input(0)]), { to: ElemType.int32 }),
  Transpose: (ctx) => ctx.emit('Transpose', [ctx.input(0)], { perm: ints(ctx, 1, 'perm') }),
  ExpandDims: (ctx) => ctx.emit('Unsqueeze', [ctx.input(0), int64Input(ctx, 1, 'axis')]),
  Squeeze: (ctx) => {
    const axes = axisList(ctx)
    return ctx.emit('Squeeze', axes.length ? [ctx.input(0), ctx.b.int64(`${ctx.node.name}/axes`, axes)] : [ctx.input(0)])
  },
  ConcatV2: (ctx) => {
    const n = ctx.inputCount - 1
    const axis = ints(ctx, n, 'axis')[0]!
    return ctx.emit('Concat', Array.from({ length: n }, (_, i) => ctx.input(i)), { axis })
  },
  Pack: (ctx) => {
    const axis = attrInt(ctx.attr('axis')) ?? 0
    const axes = ctx.b.int64(`${ctx.node.name}/axes`, [axis])
    const parts = Array.from({ length: ctx.inputCount }, (_, i) => ctx.emit('Unsqueeze', [ctx.input(i), axes])[0]!)
    return ctx.emit('Concat', parts, { axis })
  },
  /** SplitV(x, size_splits, axis) */
  SplitV: (ctx) => {
    const sizes = ints(ctx, 1, 'size_splits')
    if (sizes.includes(-1)) ctx.fail('SplitV with an inferred (-1) size is not supported')
    return ctx.emit('Split', [ctx.input(0), ctx.b.int64(`${ctx.node.name}/split`, sizes)], { axis: ints(ctx, 2, 'split_dim')[0]! }, sizes.length)
  },
  /** Split(axis, x) into num_split equal parts */
  Split: (ctx) => {
    const n = attrInt(ctx.attr('num_split'))!
    return ctx.emit('Split', [ctx.input(1)], { axis: ints(ctx, 0, 'split_dim')[0]! }, n)
  },
  /** Pad/PadV2/MirrorPad: TF paddings [[before, after], ...] → ONNX [befores..., afters...] */
  Pad: (ctx) => pad(ctx, 'constant'),
  PadV2: (ctx) => pad(ctx, 'constant'),
  MirrorPad: (ctx) => pad(ctx, ctx.attr('mode')?.s && Buffer.from(ctx.attr('mode')!.s!, 'base64').toString() === 'SYMMETRIC' ? ctx.fail('SYMMETRIC MirrorPad is not supported') : 'reflect'),
  StridedSlice: (ctx) => {
    const masks = Object.fromEntries(['begin_mask', 'end_mask', 'ellipsis_mask', 'new_axis_mask', 'shrink_axis_mask'].map((m) => [m, attrInt(ctx.attr(m)) ?? 0]))
    const begin = ints(ctx, 1, 'begin')
    if (masks.ellipsis_mask || masks.new_axis_mask) ctx.fail('StridedSlice with ellipsis_mask or new_axis_mask is not supported')
    const spec = stridedSliceSpec(begin.length, begin, ints(ctx, 2, 'end'), ints(ctx, 3, 'strides'), masks)
    const axes = spec.begin.map((_, i) => i)
    const name = ctx.node.name
    const [sliced] = ctx.emit('Slice', [ctx.input(0), ctx.b.int64(`${name}/starts`, spec.begin), ctx.b.int64(`${name}/ends`, spec.end), ctx.b.int64(`${name}/axes`, axes), ctx.b.int64(`${name}/steps`, spec.step)])
    return spec.shrink.length ? ctx.emit('Squeeze', [sliced!, ctx.b.int64(`${name}/shrink`, spec.shrink)]) : [sliced!]
  },
  /** GatherV2(params, indices, axis) */
  GatherV2: (ctx) => {
    if ((attrInt(ctx.attr('batch_dims')) ?? 0) !== 0) ctx.fail('GatherV2 with batch_dims is not supported')
    return ctx.emit('Gather', [ctx.input(0), ctx.input(1)], { axis: ints(ctx, 2, 'axis')[0]! })
  },
}

function pad(ctx: OpContext, mode: string): string[] {
  const p = ints(ctx, 1, 'paddings')
  const rank = p.length / 2
  const pads = [...Array.from({ length: rank }, (_, d) => p[2 * d]!), ...Array.from({ length: rank }, (_, d) => p[2 * d + 1]!)]
  const inputs = [ctx.input(0), ctx.b.int64(`${ctx.node.name}/pads`, pads)]
  if (ctx.node.op === 'PadV2') inputs.push(ctx.input(2))
  return ctx.emit('Pad', inputs, { mode })
}
