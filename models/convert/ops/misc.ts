/** Softmax and TopK. */
import type { OpMapping } from '../context.ts'
import { ElemType } from '../onnx-builder.ts'

export const miscOps: Record<string, OpMapping> = {
  Softmax: (ctx) => ctx.emit('Softmax', [ctx.input(0)], { axis: -1 }),
  /** TopKV2(x, k) → values, int32 indices (ONNX gives int64) */
  TopKV2: (ctx) => {
    const k = Array.from(ctx.requireConst(1, 'k').data)
    const [values, indices] = ctx.emit('TopK', [ctx.input(0), ctx.b.int64(`${ctx.node.name}/k`, k)], { axis: -1, largest: 1, sorted: 1 }, 2)
    return [values!, ctx.emit('Cast', [indices!], { to: ElemType.int32 })[0]!]
  },
}
