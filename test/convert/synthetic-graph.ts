/**
 * Builds small TF.js graph models in memory (nodes + constant weights), so that op mappings
 * no shipped model uses are still checked against TF.js.
 */
import { makeConst } from '../../models/convert/fold/tensor-math.ts'
import type { ConstTensor, TfAttr, TfGraph, TfNode } from '../../models/convert/tfjs-graph.ts'

const b64 = (s: string) => Buffer.from(s).toString('base64')
export const attr = {
  s: (v: string): TfAttr => ({ s: b64(v) }),
  i: (v: number): TfAttr => ({ i: String(v) }),
  f: (v: number): TfAttr => ({ f: v }),
  b: (v: boolean): TfAttr => ({ b: v }),
  ints: (v: number[]): TfAttr => ({ list: { i: v.map(String) } }),
  strs: (v: string[]): TfAttr => ({ list: { s: v.map(b64) } }),
  type: (v: string): TfAttr => ({ type: v }),
}

export const floatT = { T: attr.type('DT_FLOAT') }

export function placeholder(name: string, dims: number[]): TfNode {
  return { name, op: 'Placeholder', attr: { dtype: attr.type('DT_FLOAT'), shape: { shape: { dim: dims.map((d) => ({ size: String(d) })) } } } }
}

export const ints = (values: number[], shape = [values.length]) => makeConst('int32', shape, values)
/** Deterministic float weights in [-1, 1). */
export function floats(shape: number[], seed: number): ConstTensor {
  let state = seed
  const n = shape.reduce((a, b) => a * b, 1)
  return makeConst('float32', shape, Array.from({ length: n }, () => ((state = (state * 16807) % 2147483647) / 2147483647) * 2 - 1))
}

/** A graph of `nodes` plus Const nodes for `consts`, with its weights laid out as a TF.js manifest. */
export function syntheticGraph(nodes: TfNode[], consts: Record<string, ConstTensor>): TfGraph {
  const constNodes: TfNode[] = Object.keys(consts).map((name) => ({ name, op: 'Const', attr: { dtype: attr.type(consts[name]!.dtype === 'float32' ? 'DT_FLOAT' : 'DT_INT32') } }))
  const all = [...constNodes, ...nodes]
  const weights = new Map(Object.entries(consts))
  const specs = Object.entries(consts).map(([name, t]) => ({ name, shape: t.shape, dtype: t.dtype }))
  const bytes = Buffer.concat(Object.values(consts).map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)))
  return {
    json: { format: 'graph-model', modelTopology: { node: all, versions: { producer: 1395 } }, weightsManifest: [{ paths: [], weights: specs }] },
    nodes: all,
    weights,
    weightData: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
  }
}
