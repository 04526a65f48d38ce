/**
 * CPU one device start costs: the built server (`dist/runtime/server.mjs`) started as the
 * tests start it (test/helpers/device.ts `startDevice`: PORT 0, WS_PORT 0, the weakest
 * allowed scrypt, a data folder of its own), until its `listening` line, then SIGTERM until it
 * exits (SIGTERM once the device has announced itself ready on its IPC channel, as the
 * supervisor sees it: its signal handlers are installed then). CPU is user+sys from /proc (clock ticks): the server's and its inference sidecar's
 * own figures at `listening` (`/proc/<pid>/stat`), and the whole process tree's at exit (this
 * process's `cutime+cstime`, which the kernel credits when a reaped child and the children it
 * reaped end: exact, with nothing else started beside it). The sidecar's figure at exit is its
 * last `/proc` reading (polled every 10 ms while it stops).
 *
 * Baseline: another build of the device in the same run: `BENCH_START_BASELINE_DIST`, a
 * `dist/` folder whose parent has `node_modules` (e.g. `git worktree add /work/wt-start-base
 * main && cd /work/wt-start-base && ln -s …/node_modules && npm run build`), or else
 * `BENCH_START_BASELINE_REF` (main) checked out in a temporary git worktree and built there
 * (removed at the end). Starts of both alternate, each first in turn. `BENCH_START_RUNS` (10)
 * starts of each.
 *
 * Same behaviour: both builds must print the same route count in `listening` and both must
 * have their sidecar running then; the report lists both.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { WEAKEST_SCRYPT } from '../shared/auth/password.ts'
import { BENCH_DIR, figure, writeReport } from './lib/report.ts'

const TICKS_PER_SECOND = 100 // getconf CLK_TCK on Linux x86-64
const RUNS = Number(process.env.BENCH_START_RUNS ?? 10)
const candidateDist = path.join(path.dirname(BENCH_DIR), 'dist')
const root = path.dirname(BENCH_DIR)
/** Without BENCH_START_BASELINE_DIST: BENCH_START_BASELINE_REF (main) checked out in a temporary worktree and built there. */
let baselineWorktree: string | null = null
function buildBaseline(ref: string): string {
  baselineWorktree = mkdtempSync(path.join(tmpdir(), 'bench-start-base-'))
  execFileSync('git', ['worktree', 'add', '--detach', baselineWorktree, ref], { cwd: root, stdio: 'inherit' })
  symlinkSync(path.join(root, 'node_modules'), path.join(baselineWorktree, 'node_modules'))
  execFileSync(process.execPath, ['build.mjs'], { cwd: baselineWorktree, stdio: 'inherit' })
  return path.join(baselineWorktree, 'dist')
}
const baselineDist = process.env.BENCH_START_BASELINE_DIST
  ? path.resolve(process.env.BENCH_START_BASELINE_DIST)
  : buildBaseline(process.env.BENCH_START_BASELINE_REF ?? 'main')
for (const dist of [candidateDist, baselineDist]) {
  if (!existsSync(path.join(dist, 'runtime/server.mjs'))) throw new Error(`${dist}/runtime/server.mjs is missing: build it first`)
}

/** utime + stime (fields 14, 15) of a process in ms; null once it is gone. */
function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 1000 / TICKS_PER_SECOND
  } catch {
    return null
  }
}

/** cutime + cstime (fields 16, 17) of this process in ms: the CPU of every child reaped so far, with their own reaped children. */
function reapedChildrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[13]) + Number(fields[14])) * 1000 / TICKS_PER_SECOND
}

function childrenOf(pid: number): number[] {
  const pids: number[] = []
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
    if (children) pids.push(...children.split(' ').map(Number))
  }
  return pids
}

const commandOf = (pid: number): string => {
  try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ') } catch { return '' }
}

interface Start {
  wallToListeningMs: number
  serverCpuAtListeningMs: number
  sidecarCpuAtListeningMs: number
  sidecarCpuAtExitMs: number
  totalCpuToExitMs: number
  stopWallMs: number
  routes: number
  exitCode: number | null
  otherChildren: string[]
}

async function startOnce(dist: string): Promise<Start> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-device-start-'))
  const reapedBefore = reapedChildrenCpuMs()
  const spawnedAt = performance.now()
  const child = spawn(process.execPath, [path.join(dist, 'runtime/server.mjs')], {
    cwd: path.dirname(dist),
    env: {
      ...process.env,
      PORT: '0', HOST: '127.0.0.1', WS_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info',
      INITIAL_ADMIN_PASSWORD: 'initial-Passw0rd',
      PASSWORD_SCRYPT: WEAKEST_SCRYPT, PASSWORD_SCRYPT_ALLOW_WEAK: 'true',
    },
    // The IPC channel carries the device's `device.ready` (runtime/supervisor/readiness.ts), sent
    // once its SIGTERM handler is installed: a SIGTERM before it would end it by the default action.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  const ready = new Promise<void>((resolve) => child.on('message', (message: { type?: string }) => { if (message?.type === 'device.ready') resolve() }))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let stderr = ''
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  try {
    const listening = await new Promise<{ routes: number; at: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line in 60 s\n${stderr}`)), 60_000)
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const entry = JSON.parse(line)
          if (entry.msg === 'listening') { clearTimeout(timer); resolve({ routes: entry.routes, at: performance.now() }) }
        } catch { /* not a log line */ }
      })
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited with ${code} before listening\n${stderr}`)) })
    })
    const serverCpu = processCpuMs(child.pid!)!
    const children = childrenOf(child.pid!)
    const sidecarPid = children.find((pid) => commandOf(pid).includes('sidecar.mjs'))
    if (sidecarPid === undefined) throw new Error(`no sidecar running at listening (children: ${children.map(commandOf).join('; ')})`)
    const sidecarCpu = processCpuMs(sidecarPid)!
    const otherChildren = children.filter((pid) => pid !== sidecarPid).map(commandOf)
    await ready
    const stopAt = performance.now()
    child.kill('SIGTERM')
    let sidecarLast = sidecarCpu
    let polling = true
    const poll = (async () => {
      while (polling) {
        const cpu = processCpuMs(sidecarPid)
        if (cpu === null) break
        sidecarLast = cpu
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    })()
    const kill = setTimeout(() => child.kill('SIGKILL'), 30_000)
    const exitCode = await exited
    clearTimeout(kill)
    const stopWallMs = performance.now() - stopAt
    polling = false
    await poll
    return {
      wallToListeningMs: listening.at - spawnedAt,
      serverCpuAtListeningMs: serverCpu,
      sidecarCpuAtListeningMs: sidecarCpu,
      sidecarCpuAtExitMs: sidecarLast,
      totalCpuToExitMs: reapedChildrenCpuMs() - reapedBefore,
      stopWallMs,
      routes: listening.routes,
      exitCode,
      otherChildren,
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited }
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length
const stdev = (values: number[]): number => {
  const m = mean(values)
  return Math.sqrt(values.reduce((a, v) => a + (v - m) ** 2, 0) / Math.max(1, values.length - 1))
}
const round = (value: number, digits = 1): number => Number(value.toFixed(digits))

const sides = { candidate: [] as Start[], baseline: [] as Start[] }
// One unmeasured start of each first (page cache, first compile of node's own code).
await startOnce(baselineDist)
await startOnce(candidateDist)
for (let i = 0; i < RUNS; i++) {
  const order: Array<keyof typeof sides> = i % 2 === 0 ? ['baseline', 'candidate'] : ['candidate', 'baseline']
  for (const side of order) sides[side].push(await startOnce(side === 'baseline' ? baselineDist : candidateDist))
  process.stdout.write(`start ${i + 1}/${RUNS}: baseline ${sides.baseline.at(-1)!.totalCpuToExitMs} ms, candidate ${sides.candidate.at(-1)!.totalCpuToExitMs} ms CPU\n`)
}

type Key = Exclude<keyof Start, 'routes' | 'exitCode' | 'otherChildren'>
const summary = (side: Start[], key: Key) => {
  const values = side.map((s) => s[key])
  return { median: round(median(values)), mean: round(mean(values)), stdev: round(stdev(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) }
}
const keys: Key[] = ['totalCpuToExitMs', 'serverCpuAtListeningMs', 'sidecarCpuAtListeningMs', 'sidecarCpuAtExitMs', 'wallToListeningMs', 'stopWallMs']
const stats = Object.fromEntries((['candidate', 'baseline'] as const).map((side) => [side, Object.fromEntries(keys.map((key) => [key, summary(sides[side], key)]))]))
const routes = { candidate: [...new Set(sides.candidate.map((s) => s.routes))], baseline: [...new Set(sides.baseline.map((s) => s.routes))] }
const exitCodes = { candidate: [...new Set(sides.candidate.map((s) => s.exitCode))], baseline: [...new Set(sides.baseline.map((s) => s.exitCode))] }
const startCpu = (s: Start) => s.serverCpuAtListeningMs + s.sidecarCpuAtListeningMs
const baselineName = `baseline build (${path.relative(process.cwd(), baselineDist) || baselineDist})`

const file = await writeReport({
  benchmark: 'device-start',
  description: 'CPU (user+sys, server + inference sidecar) of one device start as the tests start it: spawn to "listening", then SIGTERM to exit; wall time to "listening"',
  settings: { runs: RUNS, baselineDist, candidateDist, order: 'alternating, each side first in turn, one unmeasured start of each first', clockTicksPerSecond: TICKS_PER_SECOND },
  figures: [
    figure({ name: 'CPU per start, spawn to exit (median)', unit: 'ms', value: median(sides.candidate.map((s) => s.totalCpuToExitMs)), baseline: { name: baselineName, value: median(sides.baseline.map((s) => s.totalCpuToExitMs)) }, target: { ratioAtMost: 0.7 } }),
    figure({ name: 'CPU to "listening", server + sidecar (median)', unit: 'ms', value: median(sides.candidate.map(startCpu)), baseline: { name: baselineName, value: median(sides.baseline.map(startCpu)) }, target: { ratioAtMost: 0.7 } }),
    figure({ name: 'wall time to "listening" (median)', unit: 'ms', value: round(median(sides.candidate.map((s) => s.wallToListeningMs))), baseline: { name: baselineName, value: round(median(sides.baseline.map((s) => s.wallToListeningMs))) }, target: { ratioAtMost: 1 } }),
    figure({ name: 'routes in "listening" (same behaviour)', unit: 'routes', value: routes.candidate.length === 1 ? routes.candidate[0] : -1, baseline: { name: baselineName, value: routes.baseline.length === 1 ? routes.baseline[0] : -2 }, target: { ratioAtLeast: 1, ratioAtMost: 1 } }),
  ],
  details: { stats, routes, exitCodes, otherChildrenAtListening: [...new Set([...sides.candidate, ...sides.baseline].flatMap((s) => s.otherChildren))], runs: sides },
})
console.log(`${file}\n${JSON.stringify(stats, null, 1)}`)
if (baselineWorktree) execFileSync('git', ['worktree', 'remove', '--force', baselineWorktree], { cwd: root, stdio: 'inherit' })
