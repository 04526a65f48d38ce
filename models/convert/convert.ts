/**
 * TF.js graph model → ONNX. Walks the TF graph in dependency order from its outputs;
 * constants and constant subgraphs are folded at conversion time, every other node goes
 * through the op table (`ops/index.ts`). An op with no mapping stops the conversion with a
 * ConversionError naming the model, the node and the op — never a silent skip.
 */
import { ConversionError, type OpContext } from './context.ts'
import { evaluators, tfDtype } from './fold/evaluators.ts'
import { ElemType, elemTypeOf, OnnxGraphBuilder, OPSET, type ElemTypeCode } from './onnx-builder.ts'
import { opMappings } from './ops/index.ts'
import { parseTensorRef, type ConstTensor, type TfGraph, type TfNode } from './tfjs-graph.ts'

export interface ConvertedModel {
  onnx: Uint8Array
  /** Graph inputs: name, dims (-1 = any), element type as TF names it. */
  inputs: { name: string; dims: number[]; dtype: string }[]
  /** Output tensor names, the same in the TF.js and the ONNX model. */
  outputs: string[]
  opCounts: Record<string, number>
}

/**
 * Turns a backbone into an image descriptor (models/README.md, "Image descriptor"): the
 * graph ends at `features` (NHWC maps), each averaged over its positions and L2-normalized,
 * the parts concatenated and normalized again into one output, `descriptor` [1, Σ channels].
 * The input takes any height and width. With `mirror`, the image and its left-right mirror
 * go through as a batch of two whose pooled features are added, so the descriptor of a
 * mirrored image is the same.
 */
export interface DescriptorHead {
  features: string[]
  mirror: boolean
}

export const DESCRIPTOR_OUTPUT = 'descriptor'

const tensorKey = (ref: string) => {
  const [node, index] = parseTensorRef(ref)
  return `${node}:${index}`
}
const outputName = (ref: string) => {
  const [node, index] = parseTensorRef(ref)
  return index === 0 ? node : `${node}:${index}`
}

/** The model's outputs: its signature's, else the nodes nothing consumes (as TF.js decides). */
export function graphOutputs(graph: TfGraph): string[] {
  const signed = Object.values(graph.json.signature?.outputs ?? {}).map((o) => outputName(o.name))
  if (signed.length) return signed
  const consumed = new Set(graph.nodes.flatMap((n) => (n.input ?? []).map((i) => parseTensorRef(i.replace(/^\^/, ''))[0])))
  return graph.nodes.filter((n) => !consumed.has(n.name) && n.op !== 'Const' && n.op !== 'Placeholder').map((n) => n.name)
}

/** Nodes the outputs depend on, dependencies first. */
function orderedNodes(graph: TfGraph, model: string, outputs: string[]): TfNode[] {
  const byName = new Map(graph.nodes.map((n) => [n.name, n]))
  const order: TfNode[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const stack: [string, boolean][] = outputs.map((o) => [parseTensorRef(o)[0], false])
  while (stack.length) {
    const [name, expanded] = stack.pop()!
    const node = byName.get(name)
    if (!node) throw new ConversionError(model, name, '?', 'referenced node is missing from the graph')
    if (expanded) {
      if (state.get(name) !== 'done') order.push(node)
      state.set(name, 'done')
      continue
    }
    if (state.get(name) === 'done') continue
    state.set(name, 'visiting')
    stack.push([name, true])
    for (const input of node.input ?? []) {
      if (input.startsWith('^')) continue
      const dep = parseTensorRef(input)[0]
      if (state.get(dep) !== 'done') stack.push([dep, false])
    }
  }
  return order
}

export function convertTfGraph(graph: TfGraph, model: string, head?: DescriptorHead): ConvertedModel {
  const b = new OnnxGraphBuilder()
  const outputs = head ? head.features : graphOutputs(graph)
  outputs.forEach((o) => b.unique(o))
  const consts = new Map<string, ConstTensor>()
  const values = new Map<string, string>()
  const valueTypes = new Map<string, ElemTypeCode>()
  const constInitializers = new Map<string, string>()
  const inputs: ConvertedModel['inputs'] = []
  const opCounts: Record<string, number> = {}

  for (const node of orderedNodes(graph, model, outputs)) {
    const fail = (reason: string): never => {
      throw new ConversionError(model, node.name, node.op, reason)
    }
    if (node.op === 'Const') {
      const weight = graph.weights.get(node.name) ?? fail('constant has no weight in the manifest')
      consts.set(`${node.name}:0`, weight)
      continue
    }
    const dataInputs = (node.input ?? []).filter((i) => !i.startsWith('^')).map(tensorKey)
    if (node.op === 'Placeholder') {
      // A descriptor's input takes any height and width (NHWC; its backbone is convolutional).
      const dims = (node.attr?.shape?.shape?.dim ?? []).map((d, i) => (head && (i === 1 || i === 2) ? -1 : Number(d.size)))
      const dtype = node.attr?.dtype?.type ?? 'DT_FLOAT'
      const type = elemTypeOf(tfDtype(dtype))
      b.input(node.name, type, dims.map((d, i) => (d >= 0 ? d : i === 0 ? 'batch' : `dim${i}`)))
      values.set(`${node.name}:0`, head?.mirror ? withMirror(b, node.name) : node.name)
      valueTypes.set(`${node.name}:0`, type)
      inputs.push({ name: node.name, dims, dtype })
      continue
    }
    const evaluate = evaluators[node.op]
    if (evaluate && dataInputs.every((k) => consts.has(k))) {
      let folded: ConstTensor[]
      try {
        folded = evaluate(dataInputs.map((k) => consts.get(k)!), node)
      } catch (err) {
        return fail(`constant folding failed: ${(err as Error).message}`)
      }
      folded.forEach((t, i) => consts.set(`${node.name}:${i}`, t))
      continue
    }
    const mapping = opMappings[node.op] ?? fail('this TF op has no ONNX mapping')
    const ctx: OpContext = {
      model,
      node,
      b,
      inputCount: dataInputs.length,
      input(i) {
        const key = dataInputs[i] ?? fail(`input ${i} is missing`)
        const value = values.get(key)
        if (value) return value
        const c = consts.get(key) ?? fail(`input ${key} is not computed`)
        let name = constInitializers.get(key)
        if (!name) {
          name = b.constant(key.replace(/:0$/, ''), c)
          constInitializers.set(key, name)
        }
        return name
      },
      constant: (i) => consts.get(dataInputs[i] ?? ''),
      requireConst: (i, what) => consts.get(dataInputs[i] ?? '') ?? fail(`${what} (input ${i}) must be a constant`),
      attr: (name) => node.attr?.[name],
      emit: (opType, ins, attrs, count) => b.node(opType, ins, attrs, count),
      fail,
    }
    const produced = mapping(ctx)
    opCounts[node.op] = (opCounts[node.op] ?? 0) + 1
    const type = outputElemType(node)
    produced.forEach((name, i) => {
      values.set(`${node.name}:${i}`, name)
      valueTypes.set(`${node.name}:${i}`, node.op === 'TopKV2' && i === 1 ? ElemType.int32 : type)
    })
  }

  if (head) {
    const value = (ref: string) => values.get(tensorKey(ref)) ?? (() => { throw new ConversionError(model, ref, '?', 'descriptor feature is not computed') })()
    poolDescriptor(b, outputs.map(value))
    return { onnx: b.encode(model, `descriptor head over the TF.js graph model "${model}" (opset ${OPSET})`), inputs, outputs: [DESCRIPTOR_OUTPUT], opCounts }
  }
  for (const out of outputs) {
    const key = tensorKey(out)
    let value = values.get(key)
    if (!value) {
      const c = consts.get(key) ?? (() => { throw new ConversionError(model, out, '?', 'output is not computed') })()
      value = b.constant(`${out}/value`, c)
      valueTypes.set(key, elemTypeOf(c.dtype))
    }
    b.node('Identity', [value], {}, [out])
    b.output(out, valueTypes.get(key) ?? ElemType.float)
  }
  return { onnx: b.encode(model, `converted from the TF.js graph model "${model}" (opset ${OPSET})`), inputs, outputs, opCounts }
}

/** [1,H,W,C] → [2,H,W,C]: the image, then its left-right mirror (W read backwards). */
function withMirror(b: OnnxGraphBuilder, input: string): string {
  const [mirrored] = b.node('Slice', [input, b.int64('mirror/starts', [-1]), b.int64('mirror/ends', [-(2 ** 53)]), b.int64('mirror/axes', [2]), b.int64('mirror/steps', [-1])])
  return b.node('Concat', [input, mirrored!], { axis: 0 })[0]!
}

/** Each [B,H,W,C] map → mean over H, W → sum over the batch → L2; concatenated, L2 again. */
function poolDescriptor(b: OnnxGraphBuilder, features: string[]): void {
  const batchAxis = b.int64('descriptor/batch_axis', [0])
  const parts = features.map((f) => {
    const [mean] = b.node('ReduceMean', [f], { axes: [1, 2], keepdims: 0 })
    const [sum] = b.node('ReduceSum', [mean!, batchAxis], { keepdims: 1 })
    return b.node('LpNormalization', [sum!], { axis: 1, p: 2 })[0]!
  })
  const [joined] = b.node('Concat', parts, { axis: 1 })
  b.node('LpNormalization', [joined!], { axis: 1, p: 2 }, [DESCRIPTOR_OUTPUT])
  b.output(DESCRIPTOR_OUTPUT, ElemType.float)
}

function outputElemType(node: TfNode): ElemTypeCode {
  if (['Equal', 'Greater', 'Less'].includes(node.op)) return ElemType.bool
  if (node.op === 'Shape') return ElemType.int32
  const type = node.attr?.DstT?.type ?? node.attr?.T?.type ?? node.attr?.Tparams?.type ?? node.attr?.dtype?.type
  return type ? elemTypeOf(tfDtype(type)) : ElemType.float
}
