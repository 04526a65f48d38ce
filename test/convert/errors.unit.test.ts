/** A model the converter cannot handle fails the build with the model, node and op named. */
import { describe, expect, it } from 'vitest'
import { ConversionError } from '../../models/convert/context.ts'
import { convertTfGraph } from '../../models/convert/convert.ts'
import type { TfGraph, TfNode } from '../../models/convert/tfjs-graph.ts'

function graphOf(nodes: TfNode[]): TfGraph {
  return { json: { modelTopology: { node: nodes }, weightsManifest: [] }, nodes, weights: new Map(), weightData: new ArrayBuffer(0) }
}

const placeholder: TfNode = { name: 'image', op: 'Placeholder', attr: { dtype: { type: 'DT_FLOAT' }, shape: { shape: { dim: [{ size: '1' }, { size: '4' }] } } } }

describe('conversion errors', () => {
  it('names the model, node and op of an op with no mapping', () => {
    const graph = graphOf([placeholder, { name: 'head/odd', op: 'FancyUnknownOp', input: ['image'] }, { name: 'out', op: 'Relu', input: ['head/odd'] }])
    expect(() => convertTfGraph(graph, 'toy-model')).toThrow(ConversionError)
    expect(() => convertTfGraph(graph, 'toy-model')).toThrow('model "toy-model": node "head/odd" (TF op FancyUnknownOp): this TF op has no ONNX mapping')
  })

  it('names a constant with no weight in the manifest', () => {
    const graph = graphOf([placeholder, { name: 'bias', op: 'Const' }, { name: 'out', op: 'AddV2', input: ['image', 'bias'] }])
    expect(() => convertTfGraph(graph, 'toy-model')).toThrow('model "toy-model": node "bias" (TF op Const): constant has no weight in the manifest')
  })

  it('names an input that must be constant but is computed', () => {
    const graph = graphOf([placeholder, { name: 'out', op: 'Transpose', input: ['image', 'image'] }])
    expect(() => convertTfGraph(graph, 'toy-model')).toThrow('model "toy-model": node "out" (TF op Transpose): perm (input 1) must be a constant')
  })

  it('converts a graph whose ops are all known', () => {
    const graph = graphOf([placeholder, { name: 'out', op: 'Relu', input: ['image'] }])
    const converted = convertTfGraph(graph, 'toy-model')
    expect(converted.outputs).toEqual(['out'])
    expect(converted.opCounts).toEqual({ Relu: 1 })
  })
})
