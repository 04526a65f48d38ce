/** Convolutions: TF weights (HWIO, HWCM) are reordered to ONNX's OIHW at conversion time. */
import { attrInts, attrString, attrStrings, type ConstTensor } from '../tfjs-graph.ts'
import { channelsFirst, spatial } from '../layout.ts'
import { transposeConst } from '../fold/tensor-math.ts'
import { fusedActivation } from './activation.ts'
import type { AttrValue } from '../onnx-builder.ts'
import type { OpContext, OpMapping } from '../context.ts'

/**
 * TF padding attribute → ONNX Conv/Pool padding attributes. TF SAME pads the extra at the
 * end (ONNX SAME_UPPER). With stride 1 the SAME padding does not depend on the input size,
 * so it is written out, which also serves dilated kernels (onnxruntime refuses auto_pad
 * with dilations).
 */
export function paddingAttrs(ctx: OpContext, kernel: number[], dilations: number[] = [1, 1]): Record<string, AttrValue> {
  const padding = attrString(ctx.attr('padding'))
  if (padding === 'SAME') {
    const strides = spatial(ctx, attrInts(ctx.attr('strides')), 1)
    if (strides.some((s) => s !== 1)) {
      if (dilations.some((d) => d !== 1)) ctx.fail('SAME padding with both strides and dilations is not supported')
      return { auto_pad: 'SAME_UPPER' }
    }
    const total = kernel.map((k, i) => (k - 1) * dilations[i]!)
    const begin = total.map((t) => Math.floor(t / 2))
    return { pads: [...begin, ...total.map((t, i) => t - begin[i]!)] }
  }
  if (padding === 'VALID') return { auto_pad: 'VALID' }
  if (padding === 'EXPLICIT') {
    const p = attrInts(ctx.attr('explicit_paddings'))
    const [hb, he, wb, we] = spatialPairs(ctx, p)
    return { pads: [hb, wb, he, we] }
  }
  return ctx.fail(`padding ${padding} is not supported`)
}

function spatialPairs(ctx: OpContext, p: number[]): number[] {
  const nhwc = (attrString(ctx.attr('data_format')) ?? 'NHWC') === 'NHWC'
  return nhwc ? p.slice(2, 6) : p.slice(4, 8)
}

function convAttrs(ctx: OpContext, kernel: ConstTensor): Record<string, AttrValue> {
  const kernelShape = [kernel.shape[0]!, kernel.shape[1]!]
  const dilations = spatial(ctx, attrInts(ctx.attr('dilations')), 1)
  return { kernel_shape: kernelShape, strides: spatial(ctx, attrInts(ctx.attr('strides')), 1), dilations, ...paddingAttrs(ctx, kernelShape, dilations) }
}

/** HWIO → OIHW */
const conv2dWeights = (w: ConstTensor) => transposeConst(w, [3, 2, 0, 1])
/** HWCM → (C·M)1HW: output channel c·M+m reads input channel c, as TF's depthwise does. */
function depthwiseWeights(w: ConstTensor): ConstTensor {
  const [h, wd, c, m] = w.shape as [number, number, number, number]
  const t = transposeConst(w, [2, 3, 0, 1])
  return { ...t, shape: [c * m, 1, h, wd] }
}

function convolution(depthwise: boolean, fused: boolean): OpMapping {
  return (ctx) => {
    const kernel = ctx.requireConst(1, 'filter')
    const fusedOps = fused ? attrStrings(ctx.attr('fused_ops')) : []
    if (fused && fusedOps[0] !== 'BiasAdd') ctx.fail(`fused_ops ${fusedOps.join('+')} is not supported (expected BiasAdd first)`)
    const weights = ctx.b.constant(`${ctx.node.name}/W`, depthwise ? depthwiseWeights(kernel) : conv2dWeights(kernel))
    const inputs = fused ? [weights, ctx.input(2)] : [weights]
    const attrs = convAttrs(ctx, kernel)
    if (depthwise) attrs.group = kernel.shape[2]!
    const y = channelsFirst(ctx, ctx.input(0), (x) => {
      const conv = ctx.emit('Conv', [x, ...inputs], attrs)[0]!
      // activations are elementwise: applied channels-first so that onnxruntime fuses them into Conv
      return fusedOps[1] === 'Prelu' ? conv : fusedActivation(ctx, fusedOps, conv)
    })
    return [fusedOps[1] === 'Prelu' ? fusedActivation(ctx, fusedOps, y) : y]
  }
}

/**
 * Conv2DBackpropInput(input_sizes, filter, out_backprop) → ConvTranspose. The forward
 * conv's padding is recovered from input_sizes: TF pads floor(total/2) at the start.
 */
const conv2dBackpropInput: OpMapping = (ctx) => {
  const sizes = Array.from(ctx.requireConst(0, 'input_sizes').data)
  const kernel = ctx.requireConst(1, 'filter')
  const [kh, kw] = [kernel.shape[0]!, kernel.shape[1]!]
  const strides = spatial(ctx, attrInts(ctx.attr('strides')), 1)
  const dilations = spatial(ctx, attrInts(ctx.attr('dilations')), 1)
  if (dilations.some((d) => d !== 1)) ctx.fail('dilated Conv2DBackpropInput is not supported')
  const out = spatial(ctx, sizes, 1)
  const padding = attrString(ctx.attr('padding'))
  const pads = [0, 0, 0, 0]
  const outputPadding = [0, 0]
  ;[kh, kw].forEach((k, i) => {
    const s = strides[i]!
    const inSize = padding === 'SAME' ? Math.ceil(out[i]! / s) : padding === 'VALID' ? Math.floor((out[i]! - k) / s) + 1 : ctx.fail(`padding ${padding} is not supported`)
    const total = (inSize - 1) * s + k - out[i]!
    if (total >= 0) {
      pads[i] = Math.floor(total / 2)
      pads[i + 2] = total - pads[i]!
    } else outputPadding[i] = -total
  })
  // TF filter [h, w, out_channels, in_channels] of the forward conv → ONNX [C_in, C_out, h, w]
  const weights = ctx.b.constant(`${ctx.node.name}/W`, transposeConst(kernel, [3, 2, 0, 1]))
  const y = channelsFirst(ctx, ctx.input(2), (x) =>
    ctx.emit('ConvTranspose', [x, weights], { kernel_shape: [kh, kw], strides, pads, output_padding: outputPadding })[0]!,
  )
  return [y]
}

export const convOps: Record<string, OpMapping> = {
  Conv2D: convolution(false, false),
  _FusedConv2D: convolution(false, true),
  DepthwiseConv2dNative: convolution(true, false),
  FusedDepthwiseConv2dNative: convolution(true, true),
  Conv2DBackpropInput: conv2dBackpropInput,
}
