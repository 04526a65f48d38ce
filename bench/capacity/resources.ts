import os from 'node:os'
import type { ResourcePeaks } from './frames.ts'

/**
 * Machine-wide CPU and memory peaks over a step, sampled every `intervalMs` (the sidecar and
 * the runtime share the machine, so machine-wide figures include them). CPU % is the busy
 * share of all cores between two samples; memory % is (total − available) / total. The
 * device has no accelerator: accelerator peaks are null.
 */

export interface CpuSnapshot { busy: number; total: number }

export function cpuSnapshot(cpus: os.CpuInfo[] = os.cpus()): CpuSnapshot {
  let busy = 0
  let total = 0
  for (const { times } of cpus) {
    const all = times.user + times.nice + times.sys + times.idle + times.irq
    busy += all - times.idle
    total += all
  }
  return { busy, total }
}

/** Busy share of all cores between two snapshots, in percent; null when no time passed. */
export function cpuBusyPercent(a: CpuSnapshot, b: CpuSnapshot): number | null {
  const total = b.total - a.total
  return total <= 0 ? null : Math.min(100, Math.max(0, ((b.busy - a.busy) / total) * 100))
}

export const memoryUsedPercent = (total = os.totalmem(), available = os.freemem()) => ((total - available) / total) * 100

export interface PeakSampler { stop(): ResourcePeaks }

export function startPeakSampler(intervalMs = 250): PeakSampler {
  let last = cpuSnapshot()
  let cpuPeak: number | null = null
  let memoryPeak = memoryUsedPercent()
  const sample = () => {
    const next = cpuSnapshot()
    const busy = cpuBusyPercent(last, next)
    if (busy !== null) cpuPeak = Math.max(cpuPeak ?? 0, busy)
    last = next
    memoryPeak = Math.max(memoryPeak, memoryUsedPercent())
  }
  const timer = setInterval(sample, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      sample()
      return { cpuPeakPercent: cpuPeak, memoryPeakPercent: memoryPeak, acceleratorPeakPercent: null, acceleratorMemoryPeakPercent: null }
    },
  }
}
