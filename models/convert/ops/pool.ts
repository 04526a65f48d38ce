/** Pooling: channels-first in ONNX. TF's SAME average pool excludes the padding from the count, as ONNX's default does. */
import { attrInts } from '../tfjs-graph.ts'
import { channelsFirst, spatial } from '../layout.ts'
import { paddingAttrs } from './conv.ts'
import type { OpMapping } from '../context.ts'

const pool = (onnxOp: string): OpMapping => (ctx) => {
  const kernel = spatial(ctx, attrInts(ctx.attr('ksize')), 1)
  const attrs = { kernel_shape: kernel, strides: spatial(ctx, attrInts(ctx.attr('strides')), 1), ...paddingAttrs(ctx, kernel) }
  return [channelsFirst(ctx, ctx.input(0), (x) => ctx.emit(onnxOp, [x], attrs)[0]!)]
}

export const poolOps: Record<string, OpMapping> = {
  MaxPool: pool('MaxPool'),
  AvgPool: pool('AveragePool'),
}
