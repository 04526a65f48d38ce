import type { PipelineManifest } from '../../models/manifest-schema.ts'

/** Decoders whose targets are single objects with a box (a mask region may hold several people). */
const COUNTABLE = new Set(['centernet', 'ssd-anchors'])

/**
 * Whether an algorithm can count people for passenger-flow statistics (spec 4.10 "Algorithm:
 * passenger-flow algorithm list"): its result detector reports individual boxes and one of
 * the labels it can emit is `person`.
 */
export function countsPeople(manifest: PipelineManifest): boolean {
  const node = manifest.nodes.find((n) => n.id === manifest.result.targets)
  if (!node || node.action !== 'detector' || !COUNTABLE.has(node.decoder.kind)) return false
  const classes = node.decoder.kind === 'centernet' && node.decoder.classes ? node.decoder.classes : node.labels.map((_, i) => i)
  return classes.some((index) => node.labels[index] === 'person')
}
