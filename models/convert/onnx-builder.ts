/**
 * Collects ONNX nodes, initializers and graph inputs/outputs, and serializes them with the
 * ONNX protobuf bindings of `onnx-proto`.
 */
import onnxProto from 'onnx-proto'
import type { ConstTensor } from './tfjs-graph.ts'

const { onnx } = onnxProto

/** ONNX TensorProto element types used here. */
export const ElemType = { float: 1, uint8: 2, int32: 6, int64: 7, bool: 9 } as const
export type ElemTypeCode = (typeof ElemType)[keyof typeof ElemType]

export const elemTypeOf = (dtype: ConstTensor['dtype']): ElemTypeCode =>
  dtype === 'float32' ? ElemType.float : dtype === 'int32' ? ElemType.int32 : ElemType.bool

/** A float attribute (plain numbers are written as INT attributes). */
export class FloatAttr {
  constructor(readonly value: number) {}
}
export type AttrValue = number | number[] | string | FloatAttr

export const OPSET = 15
/** IR version 8 (ONNX 1.10) carries opset 15. */
const IR_VERSION = 8

export class OnnxGraphBuilder {
  private readonly nodes: onnxProto.onnx.INodeProto[] = []
  private readonly initializers: onnxProto.onnx.ITensorProto[] = []
  private readonly inputs: onnxProto.onnx.IValueInfoProto[] = []
  private readonly outputs: onnxProto.onnx.IValueInfoProto[] = []
  private readonly names = new Set<string>()

  /** A value name not used yet, derived from `base`. */
  unique(base: string): string {
    let name = base
    for (let i = 1; this.names.has(name); i++) name = `${base}__${i}`
    this.names.add(name)
    return name
  }

  /** Adds a node; returns its output value names. */
  node(opType: string, inputs: string[], attrs: Record<string, AttrValue> = {}, outputs: number | string[] = 1, domain = ''): string[] {
    const outNames = typeof outputs === 'number' ? Array.from({ length: outputs }, (_, i) => this.unique(`${opType}_${this.nodes.length}_${i}`)) : outputs
    this.nodes.push({
      opType,
      domain,
      name: this.unique(`node_${opType}_${this.nodes.length}`),
      input: inputs,
      output: outNames,
      attribute: Object.entries(attrs).map(([name, v]) => toAttribute(name, v)),
    })
    return outNames
  }

  /** Adds an initializer holding `t`; returns its name. */
  constant(base: string, t: ConstTensor): string {
    const name = this.unique(base)
    const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)
    this.initializers.push({ name, dims: t.shape, dataType: elemTypeOf(t.dtype), rawData: bytes.slice() })
    return name
  }

  /** Adds an int64 initializer (shapes, axes, pads). */
  int64(base: string, values: number[], dims: number[] = [values.length]): string {
    const name = this.unique(base)
    const data = BigInt64Array.from(values.map((v) => BigInt(Math.trunc(v))))
    this.initializers.push({ name, dims, dataType: ElemType.int64, rawData: new Uint8Array(data.buffer) })
    return name
  }

  float(base: string, values: number[], dims: number[] = [values.length]): string {
    return this.constant(base, { dtype: 'float32', shape: dims, data: Float32Array.from(values) })
  }

  input(name: string, elemType: ElemTypeCode, dims: (number | string)[]): void {
    this.names.add(name)
    this.inputs.push({ name, type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } } })
  }

  output(name: string, elemType: ElemTypeCode): void {
    this.outputs.push({ name, type: { tensorType: { elemType } } })
  }

  encode(graphName: string, docString: string): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: IR_VERSION,
      producerName: 'edge-ai-device/models/convert',
      docString,
      opsetImport: [{ domain: '', version: OPSET }],
      graph: { name: graphName, node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs },
    })
    return onnx.ModelProto.encode(model).finish()
  }
}

function toAttribute(name: string, v: AttrValue): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType
  if (v instanceof FloatAttr) return { name, type: T.FLOAT, f: v.value }
  if (typeof v === 'string') return { name, type: T.STRING, s: new TextEncoder().encode(v) }
  if (Array.isArray(v)) return { name, type: T.INTS, ints: v }
  return { name, type: T.INT, i: v }
}
