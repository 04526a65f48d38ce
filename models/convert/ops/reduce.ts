/** Reductions over constant axes (opset 15: ReduceSum takes axes as an input, the others as an attribute). */
import type { OpMapping } from '../context.ts'

const reduce = (onnxOp: string): OpMapping => (ctx) => {
  const axes = Array.from(ctx.requireConst(1, 'reduction_indices').data)
  const keepdims = ctx.attr('keep_dims')?.b ? 1 : 0
  if (onnxOp === 'ReduceSum') return ctx.emit(onnxOp, [ctx.input(0), ctx.b.int64(`${ctx.node.name}/axes`, axes)], { keepdims })
  return ctx.emit(onnxOp, [ctx.input(0)], { axes, keepdims })
}

export const reduceOps: Record<string, OpMapping> = {
  Mean: reduce('ReduceMean'),
  Sum: reduce('ReduceSum'),
  Max: reduce('ReduceMax'),
  Min: reduce('ReduceMin'),
  Prod: reduce('ReduceProd'),
}
