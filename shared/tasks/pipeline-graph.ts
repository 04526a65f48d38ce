import type { PipelineDescription } from '../aihost/types.ts'
import type { TaskConfig } from './types.ts'

/** The threshold a node runs with for this task: per-node override, task-wide override for the result detector, manifest default. */
export function effectiveThreshold(pipeline: PipelineDescription, nodeId: string, config: TaskConfig): number | null {
  const node = pipeline.nodes.find((n) => n.id === nodeId)
  if (!node || typeof node.scoreThreshold !== 'number') return null
  return config.thresholds?.[nodeId] ?? (nodeId === pipeline.result.targets ? config.scoreThreshold : undefined) ?? node.scoreThreshold
}

/**
 * The pipeline as a graph: the image enters every detector, `from` links crops and
 * classifiers, the logic node reads the result targets (and the classifiers' labels), and
 * the result collects the targets.
 */
export function pipelineGraph(pipeline: PipelineDescription, config: TaskConfig) {
  const nodes = [
    { id: 'image', action: 'input' },
    ...pipeline.nodes.map((n) => ({
      id: n.id,
      action: n.action,
      ...(n.model ? { model: n.model } : {}),
      ...(typeof n.scoreThreshold === 'number' ? { scoreThreshold: effectiveThreshold(pipeline, n.id, config), defaultScoreThreshold: n.scoreThreshold } : {}),
      ...(Array.isArray(n.labels) ? { labels: n.labels } : {}),
      ...(n.action === 'logic' ? { condition: n.condition, minTargets: n.minTargets } : {}),
      enabled: !(config.disabledNodes ?? []).includes(n.id),
    })),
    { id: 'result', action: 'output' },
  ]
  const edges: { from: string; to: string }[] = []
  const classifiers = pipeline.nodes.filter((n) => n.action === 'classifier').map((n) => n.id)
  const feeders = [pipeline.result.targets, ...classifiers]
  for (const n of pipeline.nodes) {
    if (n.action === 'detector') edges.push({ from: 'image', to: n.id })
    if (n.from) edges.push({ from: n.from, to: n.id })
  }
  const logic = pipeline.nodes.find((n) => n.action === 'logic')
  if (logic) {
    for (const id of feeders) edges.push({ from: id, to: logic.id })
    edges.push({ from: logic.id, to: 'result' })
  } else {
    for (const id of feeders) edges.push({ from: id, to: 'result' })
  }
  return { nodes, edges }
}
