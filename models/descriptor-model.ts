import type { ModelSource, PipelineManifest, RecognizerNode } from './manifest-schema.ts'

/**
 * The name of the model that makes a recognizer's descriptors (docs/galleries.md "Descriptor
 * model changes"): the model's source and the output read, e.g.
 * `build:face-recognition-resnet#descriptor@2` (`@` and the node's `descriptorVersion` when it has
 * one). Gallery images record it (`descriptor_model`); a
 * search compares only descriptors of one name, and a gallery whose images were described by
 * another model is described again.
 */
export function descriptorModelOf(manifest: PipelineManifest, node?: RecognizerNode): string | null {
  const recognizer = node ?? manifest.nodes.find((n): n is RecognizerNode => n.action === 'recognizer')
  if (!recognizer) return null
  const source = manifest.models[recognizer.model]?.source
  if (!source) return null
  const name = `${sourceName(manifest.algorithmId, source)}#${recognizer.descriptorOutput}`
  return recognizer.descriptorVersion ? `${name}@${recognizer.descriptorVersion}` : name
}

function sourceName(algorithmId: string, source: ModelSource): string {
  if ('build' in source) return `build:${source.build}`
  if ('package' in source) return `npm:${source.package}/${source.file}`
  if ('path' in source) return `algorithm:${algorithmId}/${source.path}`
  return `uploaded:${source.uploaded}`
}
