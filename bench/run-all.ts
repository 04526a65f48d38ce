/**
 * `npm run bench [-- name ...]`: builds the device (`node build.mjs`), then runs every benchmark `bench/*.bench.{ts,mjs}` (or only the
 * named ones) one after another, each in its own Node process, then writes
 * `bench/out/summary.json` and `bench/out/summary.md` from the reports they wrote
 * (`bench/out/<name>.json`, contract in `bench/lib/report.ts`).
 *
 * Exits non-zero when a benchmark crashed or wrote no valid report; a figure that misses its
 * target is reported (pass = no) but is not a crash.
 */
import { execFileSync, spawn } from 'node:child_process'
import { readdir, rm, writeFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { describeMachine } from './lib/machine.ts'
import { BENCH_DIR, BENCH_OUT_DIR, readReport, type Report } from './lib/report.ts'
import { summaryMarkdown, type SummaryEntry } from './lib/summary.ts'

const BENCH_FILE = /^(?<name>[a-z0-9-]+)\.bench\.(ts|mjs)$/
/** Per benchmark, unless BENCH_TIMEOUT_MS says otherwise: 15 min, longer for those that hold long steps or many measuring windows. */
const TIMEOUT_MS: Record<string, number> = { capacity: 120 * 60_000, 'live-recording': 30 * 60_000 }
const timeoutOf = (name: string) => Number(process.env.BENCH_TIMEOUT_MS ?? TIMEOUT_MS[name] ?? 15 * 60_000)

/** A benchmark that overran gets this long after SIGTERM to stop its devices, ffmpegs and browsers. */
const STOP_GRACE_MS = 15_000
/** Set when this runner is asked to stop: the benchmark running is stopped and no other starts. */
let interrupted: NodeJS.Signals | null = null

/**
 * Runs one benchmark in a process group of its own, so that a timeout or a stop of this runner
 * ends what the benchmark started too (devices, sidecars, ffmpeg, Chromium), not only its node.
 */
function runNode(file: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    // tsx as a loader lets .mjs benchmarks import the .ts helpers in bench/lib too.
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: path.dirname(BENCH_DIR), stdio: 'inherit', detached: true })
    const signalGroup = (signal: NodeJS.Signals) => {
      try { process.kill(-child.pid!, signal) } catch { /* the group is gone */ }
    }
    let killTimer: NodeJS.Timeout | undefined
    const stop = () => {
      signalGroup('SIGTERM')
      killTimer ??= setTimeout(() => signalGroup('SIGKILL'), STOP_GRACE_MS)
    }
    const timer = setTimeout(stop, timeoutMs)
    const onSignal = (signal: NodeJS.Signals) => { interrupted = signal; stop() }
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      // Whatever the benchmark left behind in its group goes with it.
      signalGroup('SIGKILL')
      if (killTimer) clearTimeout(killTimer)
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal)
      resolve(code ?? (signal ? 128 : 1))
    })
  })
}

async function main(only: string[]): Promise<number> {
  const files = (await readdir(BENCH_DIR)).filter((f) => BENCH_FILE.test(f)).sort()
  const selected = files.filter((f) => only.length === 0 || only.includes(f.match(BENCH_FILE)!.groups!.name!))
  if (selected.length === 0) {
    console.error(`no benchmark matches ${only.join(', ') || 'bench/*.bench.{ts,mjs}'}`)
    return 2
  }
  await mkdir(BENCH_OUT_DIR, { recursive: true })
  // Benchmarks run the built device (dist/), so build it first, as `npm test` does.
  execFileSync(process.execPath, [path.join(path.dirname(BENCH_DIR), 'build.mjs')], { stdio: 'inherit' })
  const entries: SummaryEntry[] = []
  for (const file of selected) {
    const name = file.match(BENCH_FILE)!.groups!.name!
    const out = path.join(BENCH_OUT_DIR, `${name}.json`)
    await rm(out, { force: true }) // never summarise a stale report
    console.log(`\n=== ${name} (${file})`)
    const exitCode = await runNode(path.join(BENCH_DIR, file), timeoutOf(name))
    let report: Report | null = null
    let error: string | null = exitCode === 0 ? null : `exited with code ${exitCode}`
    try {
      report = await readReport(out)
      if (report.benchmark !== name) error = `report names benchmark ${report.benchmark}, expected ${name}`
    } catch (err) {
      error ??= `no valid report: ${(err as Error).message}`
    }
    entries.push({ benchmark: name, file: `bench/${file}`, exitCode, error, report })
    if (interrupted) break
  }
  const summary = { generatedAt: new Date().toISOString(), machine: describeMachine(), benchmarks: entries }
  await writeFile(path.join(BENCH_OUT_DIR, 'summary.json'), JSON.stringify(summary, null, 2) + '\n')
  const md = summaryMarkdown(summary)
  await writeFile(path.join(BENCH_OUT_DIR, 'summary.md'), md)
  console.log(`\n${md}`)
  if (interrupted) return 128 + (interrupted === 'SIGINT' ? 2 : 15)
  return entries.some((e) => e.error !== null) ? 1 : 0
}

process.exitCode = await main(process.argv.slice(2))
