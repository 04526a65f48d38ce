import type { LoadedManifest } from '../../models/load-manifests.ts'
import { offeredInputSizes } from '../../models/input-size.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import { EngineError } from './engine-error.ts'

/**
 * A task's config checked against its algorithm's manifest before a pipeline is loaded for
 * it (spec 3.2 `taskConfig`): a bad field is `InvalidParam` naming it.
 */
export function checkTaskConfig(manifest: LoadedManifest['manifest'], config: TaskConfig): void {
  checkDisabledNodes(manifest, config)
  checkInputSize(manifest, config)
}

/** `taskConfig.detectorInputSize` must be a size the algorithm's detector offers (models/input-size.ts). */
function checkInputSize(manifest: LoadedManifest['manifest'], config: TaskConfig): void {
  const size = config.detectorInputSize
  if (size === undefined) return
  const offered = offeredInputSizes(manifest)
  if (!offered.includes(size))
    throw new EngineError('InvalidParam', offered.length === 0
      ? `taskConfig.detectorInputSize: ${manifest.algorithmId} has one input size only`
      : `taskConfig.detectorInputSize: ${size} is not one of ${manifest.algorithmId}'s input sizes (${offered.join(', ')})`,
    { field: '/taskConfig/detectorInputSize', value: size, offered })
}

/** `taskConfig.disabledNodes` must name nodes of the pipeline, never its result detector. */
function checkDisabledNodes(manifest: LoadedManifest['manifest'], config: TaskConfig): void {
  for (const id of config.disabledNodes ?? []) {
    if (!manifest.nodes.some((n) => n.id === id))
      throw new EngineError('InvalidParam', `taskConfig.disabledNodes: ${id} is not a node of ${manifest.algorithmId}`, { field: '/taskConfig/disabledNodes', nodeId: id })
    if (id === manifest.result.targets)
      throw new EngineError('InvalidParam', `taskConfig.disabledNodes: ${id} produces the result targets and cannot be disabled`, { field: '/taskConfig/disabledNodes', nodeId: id })
  }
}
