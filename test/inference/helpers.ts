import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { build } from 'esbuild'
import { sidecarBuildOptions } from '../../runtime/sidecar/build-options.mjs'
import { startInference, type RunningInference } from '../../runtime/sidecar/start-inference.ts'

export const projectRoot = path.resolve(import.meta.dirname, '../..')
export const samplePath = (n: number) => path.join(projectRoot, 'node_modules/@vladmandic/face-api/demo', `sample${n}.jpg`)
/** People per sample photo (the package's demo set: group photos, faces visible). */
export const samplePeople = [3, 3, 3, 4, 5, 4] as const

export const limits = { maxEncodedImageBytes: 32 * 1024 * 1024, maxImagePixels: 64_000_000 }

/** Builds the sidecar bundle into a file of this test process (inside the project, so externals resolve). */
export async function buildSidecar(): Promise<string> {
  const outfile = path.join(projectRoot, 'dist', 'test', `sidecar-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`)
  await build(sidecarBuildOptions(projectRoot, outfile))
  return outfile
}

export interface TestInference extends RunningInference { dataDir: string; entry: string }

/** A real supervised sidecar with the shipped manifests, in a temporary DATA_DIR. */
export async function startTestInference(overrides: Partial<typeof limits> = {}): Promise<TestInference> {
  const entry = await buildSidecar()
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
      rmSync(entry, { force: true })
      rmSync(`${entry}.map`, { force: true })
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
