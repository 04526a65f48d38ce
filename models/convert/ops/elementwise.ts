/** Elementwise ops: layout-independent, so NHWC tensors pass through unchanged. */
import { tfDtype } from '../fold/evaluators.ts'
import { elemTypeOf } from '../onnx-builder.ts'
import type { OpContext, OpMapping } from '../context.ts'

const unary = (onnxOp: string): OpMapping => (ctx) => ctx.emit(onnxOp, [ctx.input(0)])
const binary = (onnxOp: string, attrs = {}): OpMapping => (ctx) => ctx.emit(onnxOp, [ctx.input(0), ctx.input(1)], attrs)
const isInt = (ctx: OpContext) => tfDtype(ctx.attr('T')?.type) === 'int32'

export const elementwiseOps: Record<string, OpMapping> = {
  Add: binary('Add'),
  AddV2: binary('Add'),
  BiasAdd: binary('Add'),
  Sub: binary('Sub'),
  Mul: binary('Mul'),
  RealDiv: binary('Div'),
  Maximum: binary('Max'),
  Minimum: binary('Min'),
  Equal: binary('Equal'),
  Greater: binary('Greater'),
  Less: binary('Less'),
  // TF floordiv rounds toward -inf; integer Div truncates, which agrees on non-negative operands
  FloorDiv: (ctx) => (isInt(ctx) ? ctx.emit('Div', [ctx.input(0), ctx.input(1)]) : ctx.emit('Floor', ctx.emit('Div', [ctx.input(0), ctx.input(1)]))),
  // ONNX Mod with fmod=0 takes the divisor's sign, as TF's FloorMod does
  FloorMod: (ctx) => ctx.emit('Mod', [ctx.input(0), ctx.input(1)], isInt(ctx) ? { fmod: 0 } : { fmod: 1 }),
  AddN: (ctx) => ctx.emit('Sum', Array.from({ length: ctx.inputCount }, (_, i) => ctx.input(i))),
  Abs: unary('Abs'),
  Neg: unary('Neg'),
  Exp: unary('Exp'),
  Log: unary('Log'),
  Sqrt: unary('Sqrt'),
  Floor: unary('Floor'),
  Square: (ctx) => ctx.emit('Mul', [ctx.input(0), ctx.input(0)]),
  Rsqrt: (ctx) => ctx.emit('Reciprocal', ctx.emit('Sqrt', [ctx.input(0)])),
  Cast: (ctx) => ctx.emit('Cast', [ctx.input(0)], { to: elemTypeOf(tfDtype(ctx.attr('DstT')?.type)) }),
  Identity: (ctx) => [ctx.input(0)],
}
