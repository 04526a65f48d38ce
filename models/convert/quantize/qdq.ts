/**
 * Static int8 quantization of a converted ONNX model in QDQ form (models/convert/README.md,
 * "int8 variants"). Every Conv gets
 * - its weights as int8, symmetric, one scale per output channel (DequantizeLinear axis 0),
 * - its bias as int32 at scale input scale × weight scale of the channel,
 * - a QuantizeLinear → DequantizeLinear pair (uint8, asymmetric) on its input and on its
 *   output — after the Relu/Clip that follows it, when one does, so that onnxruntime drops the
 *   activation into the quantization range.
 * onnxruntime fuses DequantizeLinear → Conv → QuantizeLinear into QLinearConv when the
 * session is created (u8 activations × s8 weights: the VNNI dot product on x86).
 * Activation ranges come from calibration (calibrate.ts), as data.
 */
import onnxProto from 'onnx-proto'
import { ElemType } from '../onnx-builder.ts'

const { onnx } = onnxProto
type Model = onnxProto.onnx.ModelProto
type Node = onnxProto.onnx.INodeProto
type Tensor = onnxProto.onnx.ITensorProto

export interface ActivationRange { min: number; max: number }
export type CalibrationRanges = Record<string, ActivationRange>

const INT8 = 3
const UINT8 = ElemType.uint8

/** uint8 asymmetric parameters of a range (0 always representable, as ONNX requires). */
export function activationParams({ min, max }: ActivationRange): { scale: number; zeroPoint: number } {
  const lo = Math.min(0, min), hi = Math.max(0, max)
  const scale = hi > lo ? (hi - lo) / 255 : 1
  const zeroPoint = Math.min(255, Math.max(0, Math.round(-lo / scale)))
  return { scale, zeroPoint }
}

/** Per-output-channel symmetric int8 weights: W[c, …] ≈ q[c, …] × scales[c]. */
export function quantizeWeightsPerChannel(w: Float32Array, channels: number): { q: Int8Array; scales: Float32Array } {
  const per = w.length / channels
  const q = new Int8Array(w.length)
  const scales = new Float32Array(channels)
  for (let c = 0; c < channels; c++) {
    let m = 0
    for (let i = c * per; i < (c + 1) * per; i++) m = Math.max(m, Math.abs(w[i]!))
    const s = m > 0 ? m / 127 : 1
    scales[c] = s
    for (let i = c * per; i < (c + 1) * per; i++) q[i] = Math.max(-127, Math.min(127, Math.round(w[i]! / s)))
  }
  return { q, scales }
}

function floatData(t: Tensor): Float32Array {
  if (t.rawData && t.rawData.length) {
    const out = new Float32Array(t.rawData.length / 4)
    new Uint8Array(out.buffer).set(t.rawData)
    return out
  }
  return Float32Array.from(t.floatData ?? [])
}

const raw = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice()

interface Graph {
  model: Model
  nodes: Node[]
  initializers: Map<string, Tensor>
  consumers: Map<string, Node[]>
  graphOutputs: Set<string>
}

/**
 * A mean over H and W of an NHWC tensor (squeeze-and-excite) becomes Transpose →
 * GlobalAveragePool → Transpose, which onnxruntime runs on uint8 (QLinearGlobalAveragePool);
 * it has no quantized ReduceMean.
 */
function globalPoolForm(nodes: Node[]): Node[] {
  return nodes.flatMap((n) => {
    const axes = n.attribute?.find((a) => a.name === 'axes')?.ints?.map(Number)
    const keep = n.attribute?.find((a) => a.name === 'keepdims')?.i
    if (n.opType !== 'ReduceMean' || axes?.join() !== '1,2' || Number(keep ?? 1) !== 1) return [n]
    const [x] = n.input as string[], [y] = n.output as string[]
    const perm = (p: number[]) => [{ name: 'perm', type: onnx.AttributeProto.AttributeType.INTS, ints: p }]
    return [
      { opType: 'Transpose', name: `${n.name}/to_nchw`, input: [x!], output: [`${y}/nchw`], attribute: perm([0, 3, 1, 2]) },
      { opType: 'GlobalAveragePool', name: `${n.name}/pool`, input: [`${y}/nchw`], output: [`${y}/pooled`] },
      { opType: 'Transpose', name: `${n.name}/to_nhwc`, input: [`${y}/pooled`], output: [y!], attribute: perm([0, 2, 3, 1]) },
    ]
  })
}

function readGraph(bytes: Uint8Array): Graph {
  const model = onnx.ModelProto.decode(bytes)
  const g = model.graph!
  g.node = globalPoolForm(g.node ?? [])
  const nodes = g.node
  const consumers = new Map<string, Node[]>()
  for (const n of nodes) for (const i of n.input ?? []) consumers.set(i, [...(consumers.get(i) ?? []), n])
  return {
    model,
    nodes,
    initializers: new Map((g.initializer ?? []).map((t) => [t.name!, t])),
    consumers,
    graphOutputs: new Set((g.output ?? []).map((o) => o.name!)),
  }
}

/** Convs whose weights (and bias, if any) are float initializers: the ones quantized. */
function quantizableConvs(g: Graph): Node[] {
  return g.nodes.filter((n) => n.opType === 'Conv' && (n.input ?? []).slice(1).every((i) => g.initializers.get(i)?.dataType === ElemType.float))
}

/**
 * Ops whose float activations are quantized besides Conv: onnxruntime runs them on uint8
 * (QLinearAdd, QLinearMul, QLinearConcat, QLinearGlobalAveragePool) or drops the pair around them (Relu, Clip, Resize).
 * The detection heads' Sigmoid and what follows stay float: their peaks and scores need the
 * full precision.
 */
const ELEMENTWISE = new Set(['Add', 'Mul', 'Concat', 'Clip', 'Relu', 'Resize', 'GlobalAveragePool'])

/** A Conv's output that feeds only a Relu/Clip is not quantized itself: the activation's output is. */
function feedsActivationOnly(g: Graph, t: string): boolean {
  const next = g.consumers.get(t) ?? []
  return next.length === 1 && (next[0]!.opType === 'Relu' || next[0]!.opType === 'Clip') && !g.graphOutputs.has(t)
}

/** Element type of every value, propagated from the inputs and initializers (the converter writes no value_info). */
function elementTypes(g: Graph): Map<string, number> {
  const types = new Map<string, number>()
  for (const i of g.model.graph!.input ?? []) types.set(i.name!, i.type?.tensorType?.elemType ?? ElemType.float)
  for (const [name, t] of g.initializers) types.set(name, t.dataType!)
  for (const n of g.nodes) {
    const attr = (name: string) => n.attribute?.find((a) => a.name === name)
    const first = types.get((n.input ?? [])[0] ?? '') ?? ElemType.float
    ;(n.output ?? []).forEach((o, k) => {
      const type = n.opType === 'Shape' ? ElemType.int64
        : n.opType === 'Cast' ? Number(attr('to')?.i ?? ElemType.float)
          : ['Equal', 'Greater', 'Less', 'Not', 'And', 'Or'].includes(n.opType!) ? ElemType.bool
            : n.opType === 'TopK' && k === 1 ? ElemType.int64
              : first
      types.set(o, type)
    })
  }
  return types
}

/** A tensor a Sigmoid reads (a detection head's logits) stays float: its peaks are the scores. */
function feedsHead(g: Graph, t: string): boolean {
  return (g.consumers.get(t) ?? []).some((n) => n.opType === 'Sigmoid')
}

/** Nodes after a Sigmoid up to the next Conv (peak picking, score arithmetic, box decoding): they stay float. */
function afterHeads(g: Graph): Set<Node> {
  const out = new Set<Node>()
  const stack = g.nodes.filter((n) => n.opType === 'Sigmoid').flatMap((n) => n.output ?? [])
  const seen = new Set<string>()
  while (stack.length) {
    const t = stack.pop()!
    if (seen.has(t)) continue
    seen.add(t)
    // a Conv starts quantized work again (CenterNet's head gates its features with a Sigmoid)
    for (const n of g.consumers.get(t) ?? []) if (n.opType !== 'Conv') { out.add(n); stack.push(...(n.output ?? [])) }
  }
  return out
}

/** The activation tensors quantized in the model: what calibration has to measure. */
export function calibrationTensors(bytes: Uint8Array): string[] {
  const g = readGraph(bytes)
  const producer = new Map(g.nodes.flatMap((n) => (n.output ?? []).map((o) => [o, n] as const)))
  const types = elementTypes(g)
  const floatActivation = (t: string) => !!t && !g.initializers.has(t) && !g.graphOutputs.has(t) && types.get(t) === ElemType.float
  const tensors = new Set<string>()
  const convs = new Set(quantizableConvs(g))
  const tail = afterHeads(g)
  for (const node of g.nodes) {
    const isConv = convs.has(node)
    if (tail.has(node) || (!isConv && !ELEMENTWISE.has(node.opType!))) continue
    if (!isConv && (node.input ?? []).some((t) => types.get(t) !== ElemType.float && !(node.opType === 'Resize' || node.opType === 'Clip'))) continue
    // Clip's bounds and Resize's roi/scales/sizes are parameters, not data
    const data = isConv ? [node.input![0]!] : node.opType === 'Clip' || node.opType === 'Resize' ? [node.input![0]!] : node.input!
    for (const t of data) if (floatActivation(t) && !(convs.has(producer.get(t)!) && feedsActivationOnly(g, t))) tensors.add(t)
    const out = node.output![0]!
    if (floatActivation(out) && !(isConv && feedsActivationOnly(g, out)) && !feedsHead(g, out)) tensors.add(out)
  }
  return [...tensors]
}

/** The model with `tensors` added as graph outputs (float), for calibration runs. */
export function withObservedOutputs(bytes: Uint8Array, tensors: string[]): Uint8Array {
  const { model } = readGraph(bytes)
  const known = new Set((model.graph!.output ?? []).map((o) => o.name))
  for (const t of tensors) if (!known.has(t)) model.graph!.output!.push({ name: t, type: { tensorType: { elemType: ElemType.float } } })
  return onnx.ModelProto.encode(model).finish()
}

/** The QDQ int8 model. Throws when a quantized tensor has no calibrated range. */
export function quantizeQdq(bytes: Uint8Array, ranges: CalibrationRanges): Uint8Array {
  const g = readGraph(bytes)
  const convs = quantizableConvs(g)
  const activations = new Set(calibrationTensors(bytes))
  const params = new Map<string, { scale: number; zeroPoint: number }>()
  for (const t of activations) {
    const r = ranges[t]
    if (!r) throw new Error(`models/convert: no calibrated range for tensor "${t}"`)
    params.set(t, activationParams(r))
  }
  const initializers: Tensor[] = [...g.initializers.values()]
  const replaced = new Set<string>()
  const nodes: Node[] = []
  const rename = new Map<string, string>()
  let counter = 0
  const scalar = (name: string, dataType: number, data: ArrayBufferView): string => {
    initializers.push({ name, dims: [], dataType, rawData: raw(data) })
    return name
  }
  const qdq = (t: string) => {
    const p = params.get(t)!
    const scale = scalar(`${t}/q_scale`, ElemType.float, Float32Array.of(p.scale))
    const zp = scalar(`${t}/q_zero`, UINT8, Uint8Array.of(p.zeroPoint))
    nodes.push({ opType: 'QuantizeLinear', name: `${t}/quantize`, input: [t, scale, zp], output: [`${t}/q`] })
    nodes.push({ opType: 'DequantizeLinear', name: `${t}/dequantize`, input: [`${t}/q`, scale, zp], output: [`${t}/dq`] })
    rename.set(t, `${t}/dq`)
  }
  // a Conv whose input stays float (after the heads) keeps its float weights
  const convSet = new Set(convs.filter((c) => activations.has(c.input![0]!)))
  for (const input of g.model.graph!.input ?? []) if (activations.has(input.name!)) qdq(input.name!)
  for (const node of g.nodes) {
    const inputs = (node.input ?? []).map((i) => rename.get(i) ?? i)
    if (convSet.has(node)) {
      const [x, w, bias] = node.input as string[]
      const wt = g.initializers.get(w!)!
      const channels = Number(wt.dims![0])
      const { q, scales } = quantizeWeightsPerChannel(floatData(wt), channels)
      const id = `conv${counter++}`
      initializers.push({ name: `${w}/int8`, dims: wt.dims, dataType: INT8, rawData: raw(q) })
      initializers.push({ name: `${w}/scales`, dims: [channels], dataType: ElemType.float, rawData: raw(scales) })
      initializers.push({ name: `${w}/zeros`, dims: [channels], dataType: INT8, rawData: new Uint8Array(channels) })
      nodes.push({ opType: 'DequantizeLinear', name: `${id}/w_dequantize`, input: [`${w}/int8`, `${w}/scales`, `${w}/zeros`], output: [`${w}/dq`], attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] })
      replaced.add(w!)
      inputs[1] = `${w}/dq`
      if (bias) {
        const xScale = params.get(x!)!.scale
        const b = floatData(g.initializers.get(bias)!)
        const bq = Int32Array.from(b, (v, c) => Math.round(v / (xScale * scales[c]!)))
        const bScales = Float32Array.from(scales, (s) => s * xScale)
        initializers.push({ name: `${bias}/int32`, dims: [channels], dataType: ElemType.int32, rawData: raw(bq) })
        initializers.push({ name: `${bias}/scales`, dims: [channels], dataType: ElemType.float, rawData: raw(bScales) })
        initializers.push({ name: `${bias}/zeros`, dims: [channels], dataType: ElemType.int32, rawData: new Uint8Array(channels * 4) })
        nodes.push({ opType: 'DequantizeLinear', name: `${id}/b_dequantize`, input: [`${bias}/int32`, `${bias}/scales`, `${bias}/zeros`], output: [`${bias}/dq`], attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] })
        replaced.add(bias)
        inputs[2] = `${bias}/dq`
      }
    }
    if (node.opType === 'Add' || node.opType === 'Mul')
      inputs.forEach((i, k) => {
        const c = g.initializers.get(i)
        if (!c || c.dataType !== ElemType.float || !(node.input ?? []).some((t) => activations.has(t))) return
        const values = floatData(c)
        const p = activationParams({ min: Math.min(...values), max: Math.max(...values) })
        const q = Uint8Array.from(values, (v) => Math.min(255, Math.max(0, Math.round(v / p.scale) + p.zeroPoint)))
        const name = `${i}/u8_${counter++}`
        initializers.push({ name, dims: c.dims, dataType: UINT8, rawData: q })
        const scale = scalar(`${name}/scale`, ElemType.float, Float32Array.of(p.scale))
        const zp = scalar(`${name}/zero`, UINT8, Uint8Array.of(p.zeroPoint))
        nodes.push({ opType: 'DequantizeLinear', name: `${name}/dequantize`, input: [name, scale, zp], output: [`${name}/dq`] })
        inputs[k] = `${name}/dq`
        replaced.add(i)
      })
    nodes.push({ ...node, input: inputs })
    for (const o of node.output ?? []) if (activations.has(o) && !g.graphOutputs.has(o)) qdq(o)
  }
  // a weight shared with a node that is not quantized keeps its float copy
  const stillUsed = new Set(nodes.flatMap((n) => n.input ?? []))
  g.model.graph!.node = nodes
  g.model.graph!.initializer = initializers.filter((t) => !replaced.has(t.name!) || stillUsed.has(t.name!))
  g.model.docString = `${g.model.docString ?? ''}; int8 QDQ (per-channel weights, calibrated activations)`
  return onnx.ModelProto.encode(g.model).finish()
}
