import type { PipelineDescription } from '../../shared/aihost/types.ts'
import type { Clock, Logger } from '../../shared/handler.ts'
import type { InferenceService } from '../../shared/inference/types.ts'
import type { LoadedManifest } from '../../models/load-manifests.ts'
import type { RuntimeDeviceHost } from '../device.ts'
import type { Inference } from '../sidecar/start-inference.ts'
import { recordTaskActivity } from './taskActivity.ts'

/**
 * Connects the inference service to `ctx.device`: the report behind Info, QueryDeviceStatus,
 * QueryDeviceMemStatus and GraphicsMemory; the pipelines behind OverviewStructrueRecord and
 * OperateNode; the per-task activity behind QueryTaskStatus/Info/OverviewFile. Returns the
 * inference client handlers get (the same client, with detections recorded).
 */
export function wireInference(host: RuntimeDeviceHost, inference: Inference, manifests: Map<string, LoadedManifest>, dataPath: string, clock: Clock, log: Logger): InferenceService {
  const recorded = recordTaskActivity(inference.inference, dataPath, clock, log)
  host.setTaskActivitySource(recorded.activity)

  // Sessions are keyed by model file; reports name them by the manifests' model ids.
  const modelIdByPath = new Map<string, string>()
  for (const { modelPaths } of manifests.values()) for (const [id, file] of Object.entries(modelPaths)) modelIdByPath.set(file, id)
  const pipelines = new Map<string, PipelineDescription>()
  for (const [algorithmId, { manifest }] of manifests) {
    pipelines.set(algorithmId, { algorithmId, algorithmName: manifest.algorithmName, version: manifest.version, nodes: manifest.nodes as unknown as PipelineDescription['nodes'], result: manifest.result })
  }
  host.setPipelineSource((algorithmId) => pipelines.get(algorithmId) ?? null)

  host.setInferenceReporter(async () => {
    const supervisor = inference.supervisor
    const sidecar = {
      state: supervisor.ready ? 'running' as const : supervisor.generation === 0 ? 'starting' as const : 'restarting' as const,
      pid: supervisor.pid,
      restarts: Math.max(0, supervisor.generation - 1),
    }
    // Stats need a live sidecar; while it restarts the report still says so.
    const stats = supervisor.ready ? await inference.inference.stats().catch(() => null) : null
    return {
      sidecar,
      // runtime/sidecar/session-pool.ts creates every session with the CPU provider only.
      executionProviders: ['cpu'],
      pipelines: [...pipelines.values()].map((p) => ({
        algorithmId: p.algorithmId, algorithmName: p.algorithmName, version: p.version,
        models: Object.keys(manifests.get(p.algorithmId)!.manifest.models),
      })),
      loadedModels: (stats?.sessions ?? []).map((s) => ({ model: modelIdByPath.get(s.model) ?? s.model, refs: s.refs })),
      tasks: stats?.handles.length ?? 0,
    }
  })
  return recorded.inference
}
