#!/usr/bin/env node
// `npm run bench:test-cpu [-- <vitest filters>]`: runs the suite (vitest run) and charges the CPU of
// every process to the test file whose worker started it (devices, sidecars, supervisors, ffmpeg,
// browsers), by sampling /proc every 250 ms; writes bench/out/test-cpu.json, largest first, with
// what was not charged to a file (vitest itself, browsers' daemonized helpers). Where the suite's
// time goes: bench/README.md, "Test suite".
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const HZ = 100
const pidsFile = path.join(mkdtempSync(path.join(tmpdir(), 'test-cpu-')), 'pids.jsonl')
const bootTime = Number(readFileSync('/proc/stat', 'utf8').match(/btime (\d+)/)[1])
const startedAt = Date.now() / 1000 - bootTime
const processes = new Map() // "pid:start" -> {pid, kind, first, ticks}
const parentOf = new Map()

const kindOf = (pid, comm) => {
  const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  for (const kind of ['server', 'sidecar', 'supervisor']) if (cmd.includes(`${kind}.mjs`)) return kind
  return /vitest/.test(cmd) ? 'vitest' : comm
}
function sample() {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const fields = stat.slice(close + 2).split(' ')
      const key = `${pid}:${fields[19]}`
      let entry = processes.get(key)
      if (!entry) {
        const ticks = Number(fields[11]) + Number(fields[12])
        // A process started after the sampler counts from zero; one running before, from now.
        entry = { pid: Number(pid), kind: kindOf(pid, stat.slice(stat.indexOf('(') + 1, close)), first: Number(fields[19]) / HZ > startedAt ? 0 : ticks }
        processes.set(key, entry)
      }
      entry.ticks = Number(fields[11]) + Number(fields[12])
      parentOf.set(Number(pid), Number(fields[1]))
    } catch { /* ended between the listing and the read */ }
  }
}

const timer = setInterval(sample, 250)
const started = Date.now()
const vitest = spawn(path.join(root, 'node_modules/.bin/vitest'), ['run', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit', env: { ...process.env, TEST_CPU_LOG: pidsFile } })
const code = await new Promise((resolve) => vitest.once('close', (status) => resolve(status ?? 1)))
clearInterval(timer)
sample()

const fileOf = new Map(readFileSync(pidsFile, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line)).map(({ pid, file }) => [pid, path.relative(root, file)]))
const files = new Map()
const unCharged = {}
for (const entry of processes.values()) {
  const seconds = (entry.ticks - entry.first) / HZ
  let pid = entry.pid
  while (pid > 1 && !fileOf.has(pid)) pid = parentOf.get(pid) ?? 0
  if (!fileOf.has(pid)) { unCharged[entry.kind] = (unCharged[entry.kind] ?? 0) + seconds; continue }
  const file = files.get(fileOf.get(pid)) ?? { file: fileOf.get(pid), cpuSeconds: 0, byProcess: {} }
  file.cpuSeconds += seconds
  file.byProcess[entry.kind] = (file.byProcess[entry.kind] ?? 0) + seconds
  files.set(file.file, file)
}
const round = (object) => Object.fromEntries(Object.entries(object).filter(([, v]) => v >= 0.1).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round(v * 10) / 10]))
const rows = [...files.values()].sort((a, b) => b.cpuSeconds - a.cpuSeconds).map((f) => ({ ...f, cpuSeconds: Math.round(f.cpuSeconds * 10) / 10, byProcess: round(f.byProcess) }))
const byProcess = {}
for (const row of rows) for (const [kind, seconds] of Object.entries(row.byProcess)) byProcess[kind] = (byProcess[kind] ?? 0) + seconds
const report = {
  at: new Date().toISOString(), passed: code === 0, wallSeconds: Math.round((Date.now() - started) / 1000),
  chargedCpuSeconds: Math.round(rows.reduce((sum, row) => sum + row.cpuSeconds, 0)), byProcess: round(byProcess), notCharged: round(unCharged), files: rows,
}
mkdirSync(path.join(root, 'bench/out'), { recursive: true })
writeFileSync(path.join(root, 'bench/out/test-cpu.json'), JSON.stringify(report, null, 1) + '\n')
console.log(`test-cpu: ${report.chargedCpuSeconds} s of CPU charged to ${rows.length} files, wall ${report.wallSeconds} s; bench/out/test-cpu.json`)
process.exit(code)
