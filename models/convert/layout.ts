/**
 * TF tensors keep their NHWC layout in the ONNX graph; only ops whose ONNX form is
 * channels-first (Conv, ConvTranspose, pools, DepthToSpace) are wrapped in a pair of
 * Transposes. onnxruntime's transpose optimizer cancels the back-to-back pairs between
 * consecutive convolutions when the session is created.
 */
import { attrString } from './tfjs-graph.ts'
import type { OpContext } from './context.ts'

export const NHWC_TO_NCHW = [0, 3, 1, 2]
export const NCHW_TO_NHWC = [0, 2, 3, 1]

/** True when the node's tensors are NHWC (TF's default data_format). */
export function isNhwc(ctx: OpContext): boolean {
  const format = attrString(ctx.attr('data_format')) ?? 'NHWC'
  if (format !== 'NHWC' && format !== 'NCHW') ctx.fail(`data_format ${format} is not supported`)
  return format === 'NHWC'
}

/** Runs `body` on the channels-first view of `x` and returns its result in the node's layout. */
export function channelsFirst(ctx: OpContext, x: string, body: (nchw: string) => string): string {
  if (!isNhwc(ctx)) return body(x)
  const [nchw] = ctx.emit('Transpose', [x], { perm: NHWC_TO_NCHW })
  const [y] = ctx.emit('Transpose', [body(nchw!)], { perm: NCHW_TO_NHWC })
  return y!
}

/** Picks the H and W entries of a 4-element NHWC/NCHW attribute list (strides, ksize, dilations). */
export function spatial(ctx: OpContext, values: number[], fallback: number): number[] {
  if (values.length === 0) return [fallback, fallback]
  return isNhwc(ctx) ? [values[1]!, values[2]!] : [values[2]!, values[3]!]
}
