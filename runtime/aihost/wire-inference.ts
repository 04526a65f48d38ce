import type { PipelineDescription } from '../../shared/aihost/types.ts'
import type { AlgorithmRegistryService } from '../algorithms/registry.ts'
import type { RuntimeDeviceHost } from '../device.ts'
import type { Inference } from '../inference/start.ts'

/**
 * Connects the inference service to `ctx.device`: the report behind Info, QueryDeviceStatus,
 * QueryDeviceMemStatus and GraphicsMemory; the pipelines behind OverviewStructrueRecord and
 * OperateNode.
 */
export function wireInference(host: RuntimeDeviceHost, inference: Inference, registry: AlgorithmRegistryService): void {
  // Algorithms are added and removed at run time (spec 4.11): pipelines are looked up when asked for.
  const describe = (algorithmId: string): PipelineDescription | null => {
    const manifest = registry.get(algorithmId)?.manifest
    return manifest
      ? { algorithmId, algorithmName: manifest.algorithmName, version: manifest.version, nodes: manifest.nodes as unknown as PipelineDescription['nodes'], result: manifest.result }
      : null
  }
  host.setPipelineSource(describe)
  // Sessions are keyed by model file; reports name them by the manifests' model ids.
  const modelIdOf = (file: string) => {
    for (const { manifest } of registry.list()) {
      const paths = registry.loaded(manifest.algorithmId)?.modelPaths ?? {}
      for (const [id, modelFile] of Object.entries(paths)) if (modelFile === file) return id
    }
    return file
  }

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
      pipelines: registry.list().map(({ manifest: m }) => ({
        algorithmId: m.algorithmId, algorithmName: m.algorithmName, version: m.version, models: Object.keys(m.models),
      })),
      loadedModels: (stats?.sessions ?? []).map((s) => ({ model: modelIdOf(s.model), refs: s.refs })),
      tasks: stats?.handles.length ?? 0,
    }
  })
}
