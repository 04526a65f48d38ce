/** MatMul and TF.js's _FusedMatMul (bias + activation). */
import { transposeConst } from '../fold/tensor-math.ts'
import { attrStrings } from '../tfjs-graph.ts'
import { fusedActivation } from './activation.ts'
import type { OpContext, OpMapping } from '../context.ts'

function operand(ctx: OpContext, i: number, transposed: boolean): string {
  if (!transposed) return ctx.input(i)
  const c = ctx.constant(i)
  if (c && c.shape.length === 2) return ctx.b.constant(`${ctx.node.name}/T${i}`, transposeConst(c, [1, 0]))
  return ctx.emit('Transpose', [ctx.input(i)], { perm: [1, 0] })[0]!
}

const matmul = (fused: boolean): OpMapping => (ctx) => {
  const a = operand(ctx, 0, !!ctx.attr('transpose_a')?.b)
  const b = operand(ctx, 1, !!ctx.attr('transpose_b')?.b)
  const [y] = ctx.emit('MatMul', [a, b])
  if (!fused) return [y!]
  const fusedOps = attrStrings(ctx.attr('fused_ops'))
  if (fusedOps[0] !== 'BiasAdd') ctx.fail(`fused_ops ${fusedOps.join('+')} is not supported (expected BiasAdd first)`)
  const [biased] = ctx.emit('Add', [y!, ctx.input(2)])
  return [fusedActivation(ctx, fusedOps, biased!)]
}

export const matmulOps: Record<string, OpMapping> = {
  MatMul: matmul(false),
  _FusedMatMul: matmul(true),
}
