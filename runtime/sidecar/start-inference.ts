import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Config } from '../../shared/config.ts'
import { SidecarClient } from './client.ts'
import { SidecarSupervisor, type SupervisorLog, type SupervisorOptions } from './supervisor.ts'

export interface StartInferenceOptions {
  config: Pick<Config, 'dataPath' | 'inferenceThreads' | 'maxEncodedImageBytes' | 'maxImagePixels'>
  projectRoot: string
  /** Built sidecar entry; default `<projectRoot>/dist/runtime/sidecar.mjs`. */
  entry?: string
  manifestDir?: string
  log?: SupervisorLog
  backoff?: SupervisorOptions['backoff']
}

export interface RunningInference {
  inference: SidecarClient
  supervisor: SidecarSupervisor
  close(): Promise<void>
}

/**
 * Starts the supervised sidecar and its client; the runtime puts `inference` on `ctx`.
 * The socket lives under DATA_DIR (`run/sidecar.sock`).
 */
export async function startInference(options: StartInferenceOptions): Promise<RunningInference> {
  const runDir = path.join(options.config.dataPath, 'run')
  mkdirSync(runDir, { recursive: true })
  const supervisor = new SidecarSupervisor({
    entry: options.entry ?? path.join(options.projectRoot, 'dist/runtime/sidecar.mjs'),
    launch: {
      socketPath: path.join(runDir, 'sidecar.sock'),
      projectRoot: options.projectRoot,
      ...(options.manifestDir ? { manifestDir: options.manifestDir } : {}),
      intraOpThreads: options.config.inferenceThreads,
      maxEncodedImageBytes: options.config.maxEncodedImageBytes,
      maxImagePixels: options.config.maxImagePixels,
    },
    ...(options.log ? { log: options.log } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
  })
  const inference = new SidecarClient(supervisor, options.log ? { log: options.log } : {})
  await supervisor.start()
  return {
    inference,
    supervisor,
    async close() {
      inference.close()
      await supervisor.stop()
    },
  }
}
