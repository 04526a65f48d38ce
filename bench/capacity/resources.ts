import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'

/**
 * CPU and memory of the device over a step, from /proc: the device's process tree (the
 * server, its inference sidecar, its ffmpeg readers), sampled every `intervalMs`, split by
 * role. The camera simulation (the RTSP server) and the runner are not in the tree. The
 * machine's own busy share is sampled beside it: on a shared machine it shows how much else ran.
 *
 * - CPU % of a sample = CPU time the tree used in the interval / (interval × cores);
 * - memory % = the tree's summed RSS / total memory.
 * The device has no accelerator: accelerator peaks are null.
 */

export type Role = 'server' | 'sidecar' | 'ffmpeg' | 'other'

export interface ProcStat { pid: number; ppid: number; comm: string; cpuTicks: number; rssBytes: number }

const PAGE_BYTES = 4096
let clockTicks: number | null = null
/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat. */
const ticksPerSecond = () => (clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100)

/** Fields of one /proc/<pid>/stat line (comm may hold spaces and parentheses). */
export function parseStat(line: string): ProcStat {
  const open = line.indexOf('(')
  const close = line.lastIndexOf(')')
  const rest = line.slice(close + 2).split(' ')
  // rest[0] is field 3 (state): ppid 4, utime 14, stime 15, rss 24 (pages).
  return {
    pid: Number(line.slice(0, open).trim()),
    comm: line.slice(open + 1, close),
    ppid: Number(rest[1]),
    cpuTicks: Number(rest[11]) + Number(rest[12]),
    rssBytes: Number(rest[21]) * PAGE_BYTES,
  }
}

function readProcs(): ProcStat[] {
  const procs: ProcStat[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      procs.push(parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8')))
    } catch {
      // ended meanwhile
    }
  }
  return procs
}

/** `root` and every process below it, each with its role. */
export function processTree(root: number, procs: ProcStat[]): (ProcStat & { role: Role })[] {
  const children = new Map<number, ProcStat[]>()
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p])
  const out: (ProcStat & { role: Role })[] = []
  const visit = (p: ProcStat, depth: number) => {
    out.push({ ...p, role: depth === 0 ? 'server' : p.comm === 'ffmpeg' ? 'ffmpeg' : depth === 1 && p.comm.startsWith('node') ? 'sidecar' : 'other' })
    for (const c of children.get(p.pid) ?? []) visit(c, depth + 1)
  }
  const top = procs.find((p) => p.pid === root)
  if (top) visit(top, 0)
  return out
}

export interface ResourcePeaks {
  cpuPeakPercent: number | null
  memoryPeakPercent: number | null
  acceleratorPeakPercent: null
  acceleratorMemoryPeakPercent: null
}

export interface ResourceReport {
  peaks: ResourcePeaks
  seconds: number
  /** Per role: average CPU in cores over the window, largest RSS (MB), most processes at once. */
  roles: Record<Role, { cpuCores: number; rssPeakMb: number; processesPeak: number }>
  /** The whole tree's largest RSS (MB). */
  rssPeakMb: number
  /** The machine's busy share (all processes), peak and average, in percent of all cores. */
  machineCpuPeakPercent: number | null
  machineCpuAveragePercent: number | null
  /** os.loadavg() at the start and at the end of the window. */
  loadAverage: { start: number[]; end: number[] }
}

export interface ResourceSampler { stop(): ResourceReport }

const machineCpu = () => {
  let busy = 0
  let total = 0
  for (const { times } of os.cpus()) {
    const all = times.user + times.nice + times.sys + times.idle + times.irq
    busy += all - times.idle
    total += all
  }
  return { busy, total }
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10
const ROLES: Role[] = ['server', 'sidecar', 'ffmpeg', 'other']

export function startResourceSampler(rootPid: number, intervalMs = 1000): ResourceSampler {
  const cores = os.cpus().length
  const hz = ticksPerSecond()
  const started = performance.now()
  const loadStart = os.loadavg()
  const firstMachine = machineCpu()
  let lastMachine = firstMachine
  let lastAt = started
  let lastTicks = new Map(processTree(rootPid, readProcs()).map((p) => [p.pid, p.cpuTicks]))
  const ticksByRole = Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>
  const rssPeak = Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>
  const countPeak = Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>
  let cpuPeak: number | null = null
  let treeRssPeak = 0
  let machinePeak: number | null = null

  const sample = () => {
    const now = performance.now()
    const tree = processTree(rootPid, readProcs())
    const ticks = new Map<number, number>()
    let intervalTicks = 0
    const rss = Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>
    const count = Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>
    for (const p of tree) {
      ticks.set(p.pid, p.cpuTicks)
      // A process started within the interval counts from zero (a reader that reconnected).
      const used = Math.max(0, p.cpuTicks - (lastTicks.get(p.pid) ?? 0))
      ticksByRole[p.role] += used
      intervalTicks += used
      rss[p.role] += p.rssBytes
      count[p.role]++
    }
    for (const r of ROLES) {
      rssPeak[r] = Math.max(rssPeak[r], rss[r])
      countPeak[r] = Math.max(countPeak[r], count[r])
    }
    treeRssPeak = Math.max(treeRssPeak, ROLES.reduce((sum, r) => sum + rss[r], 0))
    const seconds = (now - lastAt) / 1000
    if (seconds > 0.2) cpuPeak = Math.max(cpuPeak ?? 0, Math.min(100, (intervalTicks / hz / (seconds * cores)) * 100))
    const machine = machineCpu()
    if (machine.total > lastMachine.total) machinePeak = Math.max(machinePeak ?? 0, ((machine.busy - lastMachine.busy) / (machine.total - lastMachine.total)) * 100)
    lastMachine = machine
    lastTicks = ticks
    lastAt = now
  }
  const timer = setInterval(sample, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      sample()
      const seconds = (performance.now() - started) / 1000
      const machine = machineCpu()
      return {
        peaks: { cpuPeakPercent: cpuPeak, memoryPeakPercent: (treeRssPeak / os.totalmem()) * 100, acceleratorPeakPercent: null, acceleratorMemoryPeakPercent: null },
        seconds,
        roles: Object.fromEntries(ROLES.map((r) => [r, {
          cpuCores: Math.round((ticksByRole[r] / hz / seconds) * 1000) / 1000, rssPeakMb: mb(rssPeak[r]), processesPeak: countPeak[r],
        }])) as ResourceReport['roles'],
        rssPeakMb: mb(treeRssPeak),
        machineCpuPeakPercent: machinePeak,
        machineCpuAveragePercent: machine.total > firstMachine.total ? ((machine.busy - firstMachine.busy) / (machine.total - firstMachine.total)) * 100 : null,
        loadAverage: { start: loadStart, end: os.loadavg() },
      }
    },
  }
}
