/**
 * A TF.js graph whose input size is fixed in the graph (placeholder shape and constants
 * computed from it, e.g. CenterNet's grid size) at another square size: the placeholder's H
 * and W and the listed constants are replaced before conversion (sources.ts, `inputSizes`).
 * A size the backbone cannot divide evenly (input/32 for CenterNet) is refused.
 */
import type { InputSizes } from './sources.ts'
import type { TfGraph } from './tfjs-graph.ts'

export function withInputSize(graph: TfGraph, model: string, sizes: InputSizes, size: number): TfGraph {
  if (size % 32 !== 0) throw new Error(`models/convert: model "${model}": input size ${size} is not a multiple of 32`)
  const weights = new Map(graph.weights)
  for (const [name, values] of Object.entries(sizes.constants(size))) {
    const old = weights.get(name)
    if (!old) throw new Error(`models/convert: model "${model}": size constant "${name}" is not in the graph`)
    if (old.data.length !== values.length) throw new Error(`models/convert: model "${model}": size constant "${name}" has ${old.data.length} values, not ${values.length}`)
    weights.set(name, { ...old, data: Int32Array.from(values) })
  }
  const nodes = graph.nodes.map((n) => {
    if (n.op !== 'Placeholder') return n
    const dims = n.attr?.shape?.shape?.dim ?? []
    if (dims.length !== 4 || Number(dims[1]!.size) !== sizes.base || Number(dims[2]!.size) !== sizes.base)
      throw new Error(`models/convert: model "${model}": input is not [n, ${sizes.base}, ${sizes.base}, c]`)
    const shape = { dim: dims.map((d, i) => (i === 1 || i === 2 ? { ...d, size: String(size) } : d)) }
    return { ...n, attr: { ...n.attr, shape: { ...n.attr!.shape, shape } } }
  })
  return { ...graph, nodes, weights }
}
