/**
 * The release (infra/release/build.mjs) against the checkout's `npm start` on this machine:
 * archive and unpacked size, time from spawn to the first successful Probe, and RSS of the
 * device's processes (supervisor, server, sidecar) once idle. Writes bench/out/release.json.
 *   npm run bench -- release      (after `node build.mjs`; packs the release itself)
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { extract } from 'tar'
import { freePort } from '../test/helpers/device.ts'
import { spawnChild } from './lib/child-process.ts'
import { stealMeter } from './lib/machine.ts'
import { BENCH_DIR, figure, writeReport } from './lib/report.ts'

const ROOT = path.dirname(BENCH_DIR)
/** Wall-clock start-up swings by seconds with other load on a shared 2-core machine: more rounds, medians, and CPU time beside it. */
const ROUNDS = 6
const IDLE_MS = 5_000
const START_TIMEOUT_MS = 120_000
const MB = 1e6
/** USER_HZ of /proc/<pid>/stat times: 100 on Linux x86-64. */
const CLOCK_TICKS = 100

const work = mkdtempSync(path.join(tmpdir(), 'release-bench-'))
const loadAtStart = os.loadavg().map((v) => +v.toFixed(2))
const steal = stealMeter()

function treeBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sum + treeBytes(full)
    return sum + (entry.isFile() ? statSync(full).size : 0)
  }, 0)
}

/** Pids of `pid` and all its descendants, with the CPU seconds each has used (from /proc/<pid>/stat). */
function processTree(pid: number): { pid: number; cpuSeconds: number }[] {
  const stats = new Map<number, { ppid: number; cpuSeconds: number }>()
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ') // from field 3 (state) on
      stats.set(Number(name), { ppid: Number(fields[1]), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS })
    } catch { /* exited meanwhile */ }
  }
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) for (const [child, stat] of stats) if (stat.ppid === tree[i]) tree.push(child)
  return tree.map((p) => ({ pid: p, cpuSeconds: stats.get(p)?.cpuSeconds ?? 0 }))
}

/** Resident memory (MB) of a process and its descendants: supervisor, server, sidecar. */
function treeRss(pid: number): number {
  let kb = 0
  for (const { pid: p } of processTree(pid)) {
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8')
      kb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
    } catch { /* exited meanwhile */ }
  }
  return kb / 1024
}

async function startOnce(command: string, args: string[], cwd: string, env: Record<string, string>) {
  const port = await freePort()
  const dataDir = mkdtempSync(path.join(work, 'data-'))
  const started = performance.now()
  const child = spawnChild(command, args, { cwd, stdio: ['ignore', 'ignore', 'ignore'], env: { ...env, PORT: String(port), HOST: '127.0.0.1', WS_PORT: '0', DATA_DIR: dataDir } })
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/v1/cwai/aihost/Probe`, { method: 'POST' }).then((r) => r.ok, () => false)
      if (ok) break
      if (child.process.exitCode !== null) throw new Error(`${command} exited with ${child.process.exitCode}`)
      if (performance.now() - started > START_TIMEOUT_MS) throw new Error(`${command} did not answer Probe within ${START_TIMEOUT_MS} ms`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const startMs = performance.now() - started
    // CPU time is far less sensitive than wall time to other load on a shared machine.
    const tree = processTree(child.process.pid!)
    const startCpuSeconds = tree.reduce((sum, p) => sum + p.cpuSeconds, 0)
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
    // Supervisor, server, sidecar: where a difference in CPU time comes from.
    return { startMs, startCpuSeconds, cpuSecondsByProcess: tree.map((p) => p.cpuSeconds), loadAverage1m: +os.loadavg()[0]!.toFixed(2), rssMb: treeRss(child.process.pid!) }
  } finally {
    await child.stop(10_000)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const round1 = (v: number) => Math.round(v * 10) / 10
const round2 = (v: number) => Math.round(v * 100) / 100
const NPM_START = 'npm start (node runtime/start.mjs)'

try {
  const out = path.join(work, 'out')
  mkdirSync(out)
  const packStarted = performance.now()
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'infra/release/build.mjs'), '--outdir', out], { cwd: ROOT })
  const packMs = performance.now() - packStarted
  const archiveName = readdirSync(out).find((name) => name.endsWith('-linux-x64.tar.gz'))!
  const archive = path.join(out, archiveName)
  await extract({ file: archive, cwd: work })
  const home = path.join(work, archiveName.replace(/\.tar\.gz$/, ''))
  const executable = path.join(home, 'edge-device')
  // What `npm start` needs in the checkout: the build output and the installed packages.
  const checkoutBytes = treeBytes(path.join(ROOT, 'dist')) + treeBytes(path.join(ROOT, 'node_modules'))

  const release: Awaited<ReturnType<typeof startOnce>>[] = []
  const npmStart: Awaited<ReturnType<typeof startOnce>>[] = []
  // Interleaved rounds, each side first in turn, so load from other processes falls on both alike.
  for (let round = 0; round < ROUNDS; round++) {
    const runRelease = async () => { release.push(await startOnce(executable, [], home, { PATH: '/nonexistent' })) }
    // What `npm start` runs, without npm's own launch (which would only lengthen the baseline).
    const runNpmStart = async () => { npmStart.push(await startOnce(process.execPath, ['runtime/start.mjs'], ROOT, { PATH: process.env.PATH ?? '' })) }
    for (const run of round % 2 === 0 ? [runRelease, runNpmStart] : [runNpmStart, runRelease]) await run()
    const line = (r: Awaited<ReturnType<typeof startOnce>>) => `${Math.round(r.startMs)} ms (${r.startCpuSeconds.toFixed(2)} s CPU) ${Math.round(r.rssMb)} MB`
    console.log(`round ${round + 1}: release ${line(release.at(-1)!)}, npm start ${line(npmStart.at(-1)!)}`)
  }
  const checkout = { name: 'checkout (dist/ + node_modules/)', value: round1(checkoutBytes / MB) }
  await writeReport({
    benchmark: 'release',
    description: 'Release archive (one executable + application tree) against the checkout run with npm start',
    settings: {
      rounds: ROUNDS, order: 'interleaved, each side first in turn', idleMs: IDLE_MS, probe: 'POST /v1/cwai/aihost/Probe every 20 ms from spawn', rss: 'VmRSS sum of supervisor, server and sidecar',
      // Other work on the machine moves the wall-clock figures (docs/deployment.md "Release").
      loadAverage: { start: loadAtStart, end: os.loadavg().map((v) => +v.toFixed(2)) }, stealPercent: steal.percent(),
    },
    figures: [
      figure({ name: 'archive size', unit: 'MB', value: round1(statSync(archive).size / MB), baseline: checkout, target: { ratioAtMost: 1 } }),
      figure({ name: 'unpacked size', unit: 'MB', value: round1(treeBytes(home) / MB), baseline: checkout, target: { ratioAtMost: 1 } }),
      figure({ name: 'time to first Probe', unit: 'ms', value: Math.round(median(release.map((r) => r.startMs))), baseline: { name: NPM_START, value: Math.round(median(npmStart.map((r) => r.startMs))) }, target: { ratioAtMost: 1 } }),
      figure({ name: 'CPU time to first Probe', unit: 's', value: round2(median(release.map((r) => r.startCpuSeconds))), baseline: { name: NPM_START, value: round2(median(npmStart.map((r) => r.startCpuSeconds))) }, target: { ratioAtMost: 1 } }),
      figure({ name: 'RSS at idle', unit: 'MB', value: round1(median(release.map((r) => r.rssMb))), baseline: { name: NPM_START, value: round1(median(npmStart.map((r) => r.rssMb))) }, target: { ratioAtMost: 1.1 } }),
    ],
    details: { archive: archiveName, executableMb: round1(statSync(executable).size / MB), packMs: Math.round(packMs), release, npmStart },
  })
} finally {
  rmSync(work, { recursive: true, force: true })
}
