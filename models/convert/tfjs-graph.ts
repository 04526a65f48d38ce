/**
 * Reads a TF.js graph model (`model.json` + weight shards) into plain data: the graph's
 * nodes and every weight decoded to a typed array (float16 and affine uint8/uint16
 * quantization are dequantized to float32, as TF.js does when it loads the model).
 */
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

export type TfDtype = 'float32' | 'int32' | 'bool'

/** A tensor known at conversion time (weights and folded constants). */
export interface ConstTensor {
  dtype: TfDtype
  shape: number[]
  data: Float32Array | Int32Array | Uint8Array
}

/** One attribute value as model.json stores it (a TF AttrValue in JSON form). */
export interface TfAttr {
  s?: string
  i?: string | number
  f?: number
  b?: boolean
  type?: string
  shape?: { dim?: { size: string | number }[]; unknownRank?: boolean }
  list?: { s?: string[]; i?: (string | number)[]; f?: number[]; b?: boolean[]; type?: string[] }
}

export interface TfNode {
  name: string
  op: string
  input?: string[]
  attr?: Record<string, TfAttr>
}

interface WeightSpec {
  name: string
  shape: number[]
  dtype: string
  quantization?: { dtype: 'float16' | 'uint8' | 'uint16'; scale?: number; min?: number; original_dtype?: string }
}

export interface TfModelJson {
  format?: string
  modelTopology: { node: TfNode[]; versions?: { producer?: number } }
  weightsManifest: { paths: string[]; weights: WeightSpec[] }[]
  signature?: {
    inputs?: Record<string, { name: string }>
    outputs?: Record<string, { name: string }>
  }
}

export interface TfGraph {
  json: TfModelJson
  nodes: TfNode[]
  weights: Map<string, ConstTensor>
  /** Concatenated shard bytes in manifest order, as TF.js's IOHandler expects them. */
  weightData: ArrayBuffer
}

export async function loadTfGraph(modelJsonPath: string): Promise<TfGraph> {
  const json = JSON.parse(await readFile(modelJsonPath, 'utf8')) as TfModelJson
  const dir = dirname(modelJsonPath)
  const groups: Buffer[] = []
  const weights = new Map<string, ConstTensor>()
  for (const group of json.weightsManifest) {
    const bytes = Buffer.concat(await Promise.all(group.paths.map((p) => readFile(join(dir, p)))))
    groups.push(bytes)
    let offset = 0
    for (const spec of group.weights) {
      const count = spec.shape.reduce((a, b) => a * b, 1)
      const { tensor, byteLength } = decodeWeight(spec, bytes, offset, count)
      weights.set(spec.name, tensor)
      offset += byteLength
    }
  }
  const all = Buffer.concat(groups)
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer
  return { json, nodes: json.modelTopology.node, weights, weightData }
}

function decodeWeight(spec: WeightSpec, bytes: Buffer, offset: number, count: number): { tensor: ConstTensor; byteLength: number } {
  const copy = (n: number) => {
    const out = new ArrayBuffer(n)
    new Uint8Array(out).set(bytes.subarray(offset, offset + n))
    return out
  }
  const q = spec.quantization
  if (q) {
    const data = new Float32Array(count)
    if (q.dtype === 'float16') {
      const half = new Uint16Array(copy(count * 2))
      for (let i = 0; i < count; i++) data[i] = halfToFloat(half[i]!)
      return { tensor: asDtype(spec, data), byteLength: count * 2 }
    }
    const raw = q.dtype === 'uint8' ? new Uint8Array(copy(count)) : new Uint16Array(copy(count * 2))
    for (let i = 0; i < count; i++) data[i] = raw[i]! * (q.scale ?? 1) + (q.min ?? 0)
    return { tensor: asDtype(spec, data), byteLength: raw.byteLength }
  }
  switch (spec.dtype) {
    case 'float32':
      return { tensor: { dtype: 'float32', shape: spec.shape, data: new Float32Array(copy(count * 4)) }, byteLength: count * 4 }
    case 'int32':
      return { tensor: { dtype: 'int32', shape: spec.shape, data: new Int32Array(copy(count * 4)) }, byteLength: count * 4 }
    case 'bool':
      return { tensor: { dtype: 'bool', shape: spec.shape, data: new Uint8Array(copy(count)) }, byteLength: count }
    default:
      throw new Error(`weight ${spec.name}: unsupported dtype ${spec.dtype}`)
  }
}

function asDtype(spec: WeightSpec, data: Float32Array): ConstTensor {
  if (spec.dtype === 'int32') return { dtype: 'int32', shape: spec.shape, data: Int32Array.from(data, Math.round) }
  return { dtype: 'float32', shape: spec.shape, data }
}

/** IEEE 754 half → single precision. */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1
  const exp = (h >> 10) & 0x1f
  const frac = h & 0x3ff
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024)
  if (exp === 0x1f) return frac ? NaN : sign * Infinity
  return sign * 2 ** (exp - 15) * (1 + frac / 1024)
}

/** `node:1` → ['node', 1]; `node` → ['node', 0]; a leading `^` (control input) is kept by the caller. */
export function parseTensorRef(ref: string): [string, number] {
  const m = /^(.*):(\d+)$/.exec(ref)
  return m ? [m[1]!, Number(m[2])] : [ref, 0]
}

// ---- attribute readers ----
export const attrString = (a: TfAttr | undefined): string | undefined => (a?.s === undefined ? undefined : Buffer.from(a.s, 'base64').toString('utf8'))
export const attrInt = (a: TfAttr | undefined): number | undefined => (a?.i === undefined ? undefined : Number(a.i))
export const attrInts = (a: TfAttr | undefined): number[] => (a?.list?.i ?? []).map(Number)
export const attrStrings = (a: TfAttr | undefined): string[] => (a?.list?.s ?? []).map((s) => Buffer.from(s, 'base64').toString('utf8'))
