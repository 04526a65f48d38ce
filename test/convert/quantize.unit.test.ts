/**
 * int8 QDQ variants (models/convert/quantize/): per-channel weight scales, calibrated
 * activation pairs, and a quantized model that onnxruntime runs close to the float one.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import onnxProto from 'onnx-proto'
import { describe, expect, it } from 'vitest'
import { ElemType, FloatAttr, OnnxGraphBuilder } from '../../models/convert/onnx-builder.ts'
import { calibrate } from '../../models/convert/quantize/calibrate.ts'
import { activationParams, calibrationTensors, quantizeQdq, quantizeWeightsPerChannel } from '../../models/convert/quantize/qdq.ts'

const { onnx } = onnxProto

/** x [1,3,8,8] NCHW → Conv 3×3 (4 channels, bias) → Relu → mean over H,W (NHWC view) → Conv 1×1 (2) → y. */
function toyModel() {
  const b = new OnnxGraphBuilder()
  b.input('x', ElemType.float, [1, 3, 8, 8])
  // channel c of the first conv has weights of magnitude up to c + 1: distinct per-channel scales
  const w1 = Array.from({ length: 4 * 3 * 9 }, (_, i) => (Math.floor(i / 27) + 1) * Math.sin(i * 1.7))
  const c1 = b.node('Conv', ['x', b.float('w1', w1, [4, 3, 3, 3]), b.float('b1', [0.1, -0.2, 0.3, 0.05], [4])], { kernel_shape: [3, 3], pads: [1, 1, 1, 1] })[0]!
  const r1 = b.node('Relu', [c1])[0]!
  const nhwc = b.node('Transpose', [r1], { perm: [0, 2, 3, 1] })[0]!
  const mean = b.node('ReduceMean', [nhwc], { axes: [1, 2], keepdims: 1 })[0]!
  const nchw = b.node('Transpose', [mean], { perm: [0, 3, 1, 2] })[0]!
  const scaled = b.node('Mul', [nchw, b.float('half', [0.5], [])])[0]!
  b.node('Conv', [scaled, b.float('w2', [1, -1, 0.5, 0.25, -0.5, 0.75, 1, -0.25], [2, 4, 1, 1])], { kernel_shape: [1, 1] }, ['y'])
  b.output('y', ElemType.float)
  void FloatAttr
  return b.encode('toy', 'quantization test model')
}

const image = (seed: number) => Float32Array.from({ length: 3 * 64 }, (_, i) => Math.abs(Math.sin(seed * 13 + i * 0.37)) * 2 - 0.5)

describe('int8 quantization', () => {
  it('quantizes weights per output channel: scale = max |w| / 127 of that channel', () => {
    const w = Float32Array.from([0.5, -1, 0.25, 2, -4, 1])
    const { q, scales } = quantizeWeightsPerChannel(w, 2)
    expect(Array.from(scales)).toEqual([Math.fround(1 / 127), Math.fround(4 / 127)])
    expect(Array.from(q)).toEqual([64, -127, 32, 64, -127, 32])
  })

  it('maps an activation range to uint8 with 0 exactly representable', () => {
    expect(activationParams({ min: 0, max: 5.1 }).zeroPoint).toBe(0)
    expect(activationParams({ min: 0, max: 5.1 }).scale).toBeCloseTo(0.02, 12)
    const { scale, zeroPoint } = activationParams({ min: -1, max: 3 })
    expect(scale).toBeCloseTo(4 / 255, 9)
    expect(zeroPoint).toBe(64)
    // a range that excludes 0 is widened to it
    expect(activationParams({ min: 2, max: 4 }).zeroPoint).toBe(0)
  })

  it('writes int8 weights, per-channel scales, int32 biases and Q/DQ pairs on the calibrated activations', async () => {
    const model = toyModel()
    const tensors = calibrationTensors(model)
    // Conv input, Relu output (the Conv's own output feeds only the Relu), the pool's input and output, Mul in/out; not y (a graph output)
    expect(tensors).toContain('x')
    expect(tensors).not.toContain('y')
    const ranges = await calibrate(model, [1, 2, 3, 4].map((s) => ({ data: image(s), dims: [1, 3, 8, 8] })), 1)
    expect(Object.keys(ranges).sort()).toEqual([...tensors].sort())
    const reluOut = tensors.find((t) => t.startsWith('Relu'))!
    expect(ranges[reluOut]!.min).toBe(0)

    const quantized = onnx.ModelProto.decode(quantizeQdq(model, ranges))
    const g = quantized.graph!
    const init = new Map(g.initializer!.map((t) => [t.name!, t]))
    const w1 = init.get('w1/int8')!
    expect(w1.dataType).toBe(3) // INT8
    expect(w1.dims!.map(Number)).toEqual([4, 3, 3, 3])
    const scales = init.get('w1/scales')!
    expect(scales.dims!.map(Number)).toEqual([4])
    const s = new Float32Array(new Uint8Array(scales.rawData!).buffer)
    // channel c's largest weight is about (c + 1): four different scales, increasing
    expect(s[3]! / s[0]!).toBeGreaterThan(3)
    expect(init.has('w1')).toBe(false) // the float weights are gone
    const bias = init.get('b1/int32')!
    expect(bias.dataType).toBe(ElemType.int32)
    const wDq = g.node!.find((n) => n.input![0] === 'w1/int8')!
    expect(wDq.opType).toBe('DequantizeLinear')
    expect(Number(wDq.attribute!.find((a) => a.name === 'axis')!.i)).toBe(0)
    const ops = g.node!.map((n) => n.opType)
    expect(ops.filter((o) => o === 'QuantizeLinear')).toHaveLength(tensors.length)
    expect(ops).toContain('GlobalAveragePool')
    expect(ops).not.toContain('ReduceMean')
    // the Relu's output pair has zero point 0, so that onnxruntime drops the Relu into it
    const reluZero = init.get(`${reluOut}/q_zero`)!
    expect(reluZero.dataType).toBe(ElemType.uint8)
    expect(Array.from(reluZero.rawData!)).toEqual([0])
  })

  it('runs in onnxruntime as quantized kernels, close to the float model', async () => {
    const model = toyModel()
    const ranges = await calibrate(model, [1, 2, 3, 4, 5, 6, 7].map((s) => ({ data: image(s), dims: [1, 3, 8, 8] })), 1)
    const float = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 })
    const dir = await mkdtemp(join(tmpdir(), 'qdq-'))
    const optimized = join(dir, 'optimized.onnx')
    const int8 = await ort.InferenceSession.create(quantizeQdq(model, ranges), { intraOpNumThreads: 1, graphOptimizationLevel: 'extended', optimizedModelFilePath: optimized })
    const kernels = onnx.ModelProto.decode(await readFile(optimized)).graph!.node!.map((n) => n.opType)
    await rm(dir, { recursive: true, force: true })
    // the first conv and the pool run on uint8; the last conv writes a graph output, which stays
    // float: it runs in float on its dequantized int8 weights
    expect(kernels.filter((k) => k === 'QLinearConv')).toHaveLength(1)
    expect(kernels).toContain('QLinearGlobalAveragePool')
    expect(kernels.filter((k) => k === 'Conv')).toHaveLength(1)
    const x = new ort.Tensor('float32', image(7), [1, 3, 8, 8])
    const a = (await float.run({ x })).y!.data as Float32Array
    const q = (await int8.run({ x })).y!.data as Float32Array
    const span = Math.max(...a.map(Math.abs))
    expect(span).toBeGreaterThan(0.1)
    for (let i = 0; i < a.length; i++) expect(Math.abs(q[i]! - a[i]!)).toBeLessThan(0.08 * span)
    await float.release()
    await int8.release()
  })
})
