/** Activations, standalone and as the fused tail of _FusedConv2D / _FusedMatMul. */
import { FloatAttr } from '../onnx-builder.ts'
import type { OpContext, OpMapping } from '../context.ts'

type Activation = (ctx: OpContext, x: string, alpha: () => string) => string

const clip = (ctx: OpContext, x: string, min: number, max: number) =>
  ctx.emit('Clip', [x, ctx.b.float('clip_min', [min], []), ctx.b.float('clip_max', [max], [])])[0]!

/** TF activation name → ONNX form. `alpha` reads the Prelu slope or LeakyRelu factor. */
export const activations: Record<string, Activation> = {
  Relu: (ctx, x) => ctx.emit('Relu', [x])[0]!,
  Relu6: (ctx, x) => clip(ctx, x, 0, 6),
  Elu: (ctx, x) => ctx.emit('Elu', [x])[0]!,
  Selu: (ctx, x) => ctx.emit('Selu', [x], { alpha: new FloatAttr(1.6732632423543772), gamma: new FloatAttr(1.0507009873554805) })[0]!,
  Sigmoid: (ctx, x) => ctx.emit('Sigmoid', [x])[0]!,
  Tanh: (ctx, x) => ctx.emit('Tanh', [x])[0]!,
  LeakyRelu: (ctx, x) => ctx.emit('LeakyRelu', [x], { alpha: new FloatAttr(ctx.attr('leakyrelu_alpha')?.f ?? ctx.attr('alpha')?.f ?? 0.2) })[0]!,
  Prelu: (ctx, x, alpha) => ctx.emit('PRelu', [x, alpha()])[0]!,
}

/** Standalone activation ops: input 0 is x, a Prelu's input 1 is its slope. */
export const activationOps: Record<string, OpMapping> = Object.fromEntries(
  Object.entries(activations).map(([op, act]) => [op, (ctx: OpContext) => [act(ctx, ctx.input(0), () => ctx.input(1))]]),
)

/**
 * Applies the fused_ops tail of a fused node to `y`. Args after the two main inputs: the
 * bias first, then the Prelu slope (TF.js `_FusedConv2D` / `_FusedMatMul` convention).
 */
export function fusedActivation(ctx: OpContext, fusedOps: string[], y: string): string {
  const tail = fusedOps.slice(1)
  if (tail.length > 1) ctx.fail(`fused_ops ${fusedOps.join('+')} has more than one activation`)
  if (tail.length === 0) return y
  const act = activations[tail[0]!]
  if (!act) ctx.fail(`fused activation ${tail[0]} has no ONNX mapping`)
  return act(ctx, y, () => ctx.input(3))
}
