import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { md5Hex } from '../../shared/auth/password.ts'
import { firstJsonLine, spawnChild } from './child-process.ts'
import { BENCH_DIR } from './report.ts'

export interface BenchDevice {
  url: string
  /** The server process (its sidecar, camera readers and other ffmpeg children are its children; CPU time from /proc). */
  pid: number
  /** The device's DATA_DIR (fresh, removed by stop()). */
  dataDir: string
  /** Signs in with DoLogin (spec 4.1) and returns the `mtk`. */
  signIn(): Promise<string>
  stop(): Promise<void>
}

const ROOT = path.dirname(BENCH_DIR)
const SERVER = path.join(ROOT, 'dist/runtime/server.mjs')
const PASSWORD = 'bench-Passw0rd'

/** Node options for a benchmark's runtime from BENCH_NODE_ARGS (e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof' profiles it). */
export const runtimeNodeArgs = (): string[] => process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []

/**
 * Starts the built device runtime (`node build.mjs` first) on loopback with its default log
 * level and a fresh data folder. The first password need not change, so DoLogin alone gives
 * a usable session (INITIAL_PASSWORD_CHANGE_REQUIRED=false). `root`: another build's project
 * folder (its `dist/runtime/server.mjs`, run from there), e.g. a baseline built from an older commit.
 */
export async function startBenchDevice(env: Record<string, string> = {}, root = ROOT): Promise<BenchDevice> {
  const server = root === ROOT ? SERVER : path.join(root, 'dist/runtime/server.mjs')
  if (!existsSync(server)) throw new Error(`${server} is missing: run \`node build.mjs\` first`)
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-device-'))
  const child = spawnChild(process.execPath, [...runtimeNodeArgs(), server], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: '0', HOST: '127.0.0.1', WS_PORT: '0', DATA_DIR: dataDir,
      INITIAL_ADMIN_PASSWORD: PASSWORD, INITIAL_PASSWORD_CHANGE_REQUIRED: 'false',
      ...env,
    },
  })
  try {
    const { port } = await firstJsonLine(child.process, (v): v is { port: number } => v?.msg === 'listening' && typeof v.port === 'number', 60_000)
    const url = `http://127.0.0.1:${port}`
    return {
      url,
      pid: child.process.pid!,
      dataDir,
      async signIn() {
        const response = await fetch(`${url}/gtw/cwai/login/DoLogin`, {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ account: 'admin', pwd: md5Hex(PASSWORD) }),
        })
        const body = await response.json() as { resCode: number; resData?: { mtk: string } }
        if (body.resCode !== 1 || !body.resData) throw new Error(`DoLogin failed: ${JSON.stringify(body)}`)
        return body.resData.mtk
      },
      async stop() {
        await child.stop()
        await rm(dataDir, { recursive: true, force: true })
      },
    }
  } catch (err) {
    await child.stop()
    await rm(dataDir, { recursive: true, force: true })
    throw err
  }
}
