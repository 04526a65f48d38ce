import { modelList } from '../../models/load-manifests.ts'
import type { AlgorithmEntry, AlgorithmRow } from './types.ts'

/** spec 2.3 algorithm row (as `/gtw/cwai/algorithm/page` answers it) plus where it came from. */
export function algorithmRow(entry: AlgorithmEntry): AlgorithmRow {
  const m = entry.manifest
  return {
    algorithmId: m.algorithmId,
    algorithmName: m.algorithmName,
    algorithmUsage: m.algorithmUsage,
    algorithmCategory: m.algorithmCategory,
    supplier: m.supplier,
    version: m.version,
    description: m.description,
    runningStatus: 0,
    models: modelList(m),
    origin: entry.origin,
    updateTime: String(Math.round(entry.updatedAt)),
  }
}

/** A layout list row: the algorithm and its node graph in brief. */
export function layoutRow(entry: AlgorithmEntry) {
  const m = entry.manifest
  return {
    algorithmId: m.algorithmId,
    algorithmName: m.algorithmName,
    version: m.version,
    origin: entry.origin,
    nodes: m.nodes.map((n) => ({ id: n.id, action: n.action, ...('from' in n ? { from: n.from } : {}) })),
    updateTime: String(Math.round(entry.updatedAt)),
  }
}
