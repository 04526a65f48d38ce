import type { DetectorNode, InputSpec, PipelineManifest } from './manifest-schema.ts'

/**
 * The input a detector runs at for a task (docs/detection.md "Detector input size"):
 * `taskConfig.detectorInputSize` where the node offers that size (its own input's side, or
 * an `inputSizes` entry with the model converted at that size), else the node's own.
 */
export function detectorInput(node: DetectorNode, config: { detectorInputSize?: number }): { input: InputSpec; model: string } {
  const size = config.detectorInputSize
  const alt = size === undefined ? undefined : node.inputSizes?.find((a) => a.size === size)
  return alt ? { input: { ...node.input, width: alt.size, height: alt.size }, model: alt.model } : { input: node.input, model: node.model }
}

/** The input sizes a manifest's detectors offer a task (empty: none to choose). */
export function offeredInputSizes(manifest: PipelineManifest): number[] {
  const sizes = new Set<number>()
  for (const node of manifest.nodes)
    if (node.action === 'detector' && node.inputSizes) {
      sizes.add(node.input.width!)
      for (const alt of node.inputSizes) sizes.add(alt.size)
    }
  return [...sizes].sort((a, b) => b - a)
}

/** Models only an `inputSizes` entry uses: loaded when a task first chooses that size. */
export function sizeOnlyModels(manifest: PipelineManifest): Set<string> {
  const alternatives = new Set<string>()
  const direct = new Set<string>()
  for (const node of manifest.nodes) {
    if ('model' in node) direct.add(node.model)
    if (node.action === 'detector') for (const alt of node.inputSizes ?? []) alternatives.add(alt.model)
  }
  return new Set([...alternatives].filter((m) => !direct.has(m)))
}
