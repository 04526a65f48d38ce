import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startInference, type Inference, type StartInferenceOptions } from '../../runtime/inference/start.ts'

export const projectRoot = path.resolve(import.meta.dirname, '../..')
export const samplePath = (n: number) => path.join(projectRoot, 'node_modules/@vladmandic/face-api/demo', `sample${n}.jpg`)
/** People per sample photo (the package's demo set: group photos, faces visible). */
export const samplePeople = [3, 3, 3, 4, 5, 4] as const

export const limits = { maxEncodedImageBytes: 32 * 1024 * 1024, maxImagePixels: 64_000_000 }

/** The sidecar bundle built by the test run's global setup (build.mjs). */
export const sidecarEntry = path.join(projectRoot, 'dist/runtime/sidecar.mjs')

export interface TestInference extends Inference { dataDir: string; entry: string }

/** A real supervised sidecar with the shipped manifests, in a temporary DATA_DIR. */
export async function startTestInference(overrides: Partial<StartInferenceOptions['config']> = {}): Promise<TestInference> {
  const entry = sidecarEntry
  // Unix socket paths are short (108 bytes): keep the folder near the root of tmp.
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'inf-'))
  const running = await startInference({
    config: { dataPath: dataDir, inferenceThreads: 2, ...limits, ...overrides },
    projectRoot,
    entry,
    backoff: { initialMs: 100, maxMs: 1000, stableMs: 60_000 },
  })
  return {
    ...running,
    dataDir,
    entry,
    async close() {
      await running.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Resolves with the error a promise rejects with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<{ id: string; item: { messageKey: string; retryable: boolean; recommendedAction: string; details: Record<string, unknown> } }> {
  try {
    await promise
  } catch (error) {
    return error as never
  }
  throw new Error('expected the call to fail')
}
