import { vi } from 'vitest'

/**
 * Unit tests start no process: what needs one (the device, its sidecar, ffmpeg, a broker, a
 * browser) is an integration, browser or e2e test. A unit test that tries fails with this.
 */
const { guard } = vi.hoisted(() => ({
  guard: (real: typeof import('node:child_process')) => {
    const refuse = (name: string) => () => {
      throw new Error(`child_process.${name}: a unit test starts no process; name the file *.integration.test.ts`)
    }
    const blocked = Object.fromEntries(['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'].map((name) => [name, refuse(name)]))
    return { ...real, ...blocked, default: { ...real, ...blocked } }
  },
}))
vi.mock('node:child_process', async (importOriginal) => guard(await importOriginal()))
vi.mock('child_process', async (importOriginal) => guard(await importOriginal()))

// Unit tests that open models in-process leave no onnxruntime telemetry file in /tmp (docs/deployment.md, "What the device writes").
process.env.ORT_DISABLE_TELEMETRY ??= '1'
