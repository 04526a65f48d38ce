import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { settings, type Config } from '../../shared/config.ts'
import { SidecarClient } from './client.ts'
import { defaultManifestDir, loadManifests, type LoadedManifest } from '../../models/load-manifests.ts'
import { onSidecarRestart, SidecarSupervisor, type SupervisorLog, type SupervisorOptions } from './supervisor.ts'
import type { DeviceMetrics } from '../metrics/index.ts'

export interface StartInferenceOptions {
  /** The decode admission settings default as in shared/config.ts (tests and benchmarks leave them out). */
  config: Pick<Config, 'dataPath' | 'inferenceThreads' | 'maxEncodedImageBytes' | 'maxImagePixels'>
    & Partial<Pick<Config, 'decodeMemoryBudgetBytes' | 'decodeQueueMax' | 'decodeQueueWaitMs' | 'imageShrinkOnLoad'>>
  projectRoot: string
  /** Built sidecar entry; default `<projectRoot>/dist/runtime/sidecar.mjs`. */
  entry?: string
  /**
   * The algorithms to define in the sidecar at once: default every manifest of `manifestDir`
   * (default `models/manifests`). The runtime passes none and lets its registry define them.
   */
  algorithms?: Iterable<LoadedManifest>
  manifestDir?: string
  log?: SupervisorLog
  backoff?: SupervisorOptions['backoff']
  /** Detection times and sidecar restarts (docs/metrics.md "Metrics"). */
  metrics?: DeviceMetrics['inference']
}

export interface Inference {
  inference: SidecarClient
  supervisor: SidecarSupervisor
  /** Spawns the sidecar; resolves when it listens. */
  start(): Promise<void>
  close(): Promise<void>
}

/** Unix socket paths are limited to ~107 bytes: a deep DATA_DIR falls back to the temp folder. */
function socketPathFor(runDir: string): string {
  const preferred = path.join(runDir, 'sidecar.sock')
  if (Buffer.byteLength(preferred) <= 100) return preferred
  return path.join(os.tmpdir(), `edge-sidecar-${createHash('sha256').update(runDir).digest('hex').slice(0, 16)}.sock`)
}

/**
 * The supervised sidecar and its client, not yet started; the runtime puts `inference` on
 * `ctx` and starts it as a component. The socket lives under DATA_DIR (`run/sidecar.sock`).
 */
export function createInference(options: StartInferenceOptions): Inference {
  const runDir = path.join(options.config.dataPath, 'run')
  const supervisor = new SidecarSupervisor({
    entry: options.entry ?? path.join(options.projectRoot, 'dist/runtime/sidecar.mjs'),
    launch: {
      socketPath: socketPathFor(runDir),
      projectRoot: options.projectRoot,
      dataPath: options.config.dataPath,
      intraOpThreads: options.config.inferenceThreads,
      maxEncodedImageBytes: options.config.maxEncodedImageBytes,
      maxImagePixels: options.config.maxImagePixels,
      decodeMemoryBudgetBytes: options.config.decodeMemoryBudgetBytes ?? settings.decodeMemoryBudgetBytes.default,
      decodeQueueMax: options.config.decodeQueueMax ?? settings.decodeQueueMax.default,
      decodeQueueWaitMs: options.config.decodeQueueWaitMs ?? settings.decodeQueueWaitMs.default,
      shrinkOnLoad: options.config.imageShrinkOnLoad ?? settings.imageShrinkOnLoad.default,
    },
    ...(options.log ? { log: options.log } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
  })
  const inference = new SidecarClient(supervisor, { ...(options.log ? { log: options.log } : {}), ...(options.metrics ? { metrics: options.metrics } : {}) })
  const restarts = options.metrics?.sidecarRestarts
  if (restarts) onSidecarRestart(supervisor, () => restarts.inc())
  const algorithms = options.algorithms ??
    loadManifests(options.manifestDir ?? defaultManifestDir(options.projectRoot), options.projectRoot, options.config.dataPath).values()
  for (const algorithm of algorithms) void inference.define(algorithm)
  return {
    inference,
    supervisor,
    async start() {
      mkdirSync(runDir, { recursive: true })
      await supervisor.start()
    },
    async close() {
      inference.close()
      await supervisor.stop()
    },
  }
}

/** Creates and starts at once (tests, benchmarks). */
export async function startInference(options: StartInferenceOptions): Promise<Inference> {
  const running = createInference(options)
  await running.start()
  return running
}
