import { readFile, statfs } from 'node:fs/promises'
import os from 'node:os'

/**
 * Facts about the machine and processes, read from the operating system (Linux /proc,
 * statfs). Every number is measured; what cannot be read is null, never a guess.
 */

const readText = async (file: string) => {
  try {
    return await readFile(file, 'utf8')
  } catch {
    return null
  }
}

/** spec 4.11: the operating system's boot identity; changes only when the OS reboots. */
export async function bootId(): Promise<string | null> {
  return (await readText('/proc/sys/kernel/random/boot_id'))?.trim() ?? null
}

/** `/proc/meminfo` fields in bytes (MemTotal, MemAvailable, ...). */
async function memInfo(): Promise<Record<string, number>> {
  const text = await readText('/proc/meminfo')
  const out: Record<string, number> = {}
  for (const line of text?.split('\n') ?? []) {
    const match = /^(\w+):\s+(\d+)\s*kB/.exec(line)
    if (match) out[match[1]!] = Number(match[2]) * 1024
  }
  return out
}

/** Resident and virtual size of a process, from /proc/<pid>/status; null when it is gone. */
export async function processMemory(pid: number): Promise<{ pid: number; rssBytes: number; vmSizeBytes: number } | null> {
  const text = await readText(`/proc/${pid}/status`)
  if (!text) return null
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s*kB`, 'm').exec(text)?.[1] ?? NaN) * 1024
  const rss = kb('VmRSS')
  return Number.isFinite(rss) ? { pid, rssBytes: rss, vmSizeBytes: kb('VmSize') } : null
}

export async function systemMemory() {
  const info = await memInfo()
  const total = info.MemTotal ?? os.totalmem()
  const available = info.MemAvailable ?? os.freemem()
  return {
    totalBytes: total,
    availableBytes: available,
    freeBytes: info.MemFree ?? os.freemem(),
    usedBytes: total - available,
    usedPercent: Math.round(((total - available) / total) * 1000) / 10,
    swapTotalBytes: info.SwapTotal ?? null,
    swapFreeBytes: info.SwapFree ?? null,
  }
}

/** This Node process: resident size and the V8 heap. */
export function runtimeMemory() {
  const usage = process.memoryUsage()
  return { pid: process.pid, rssBytes: usage.rss, heapTotalBytes: usage.heapTotal, heapUsedBytes: usage.heapUsed, externalBytes: usage.external, arrayBuffersBytes: usage.arrayBuffers }
}

export function cpuLoad() {
  const [load1, load5, load15] = os.loadavg()
  return { cores: os.availableParallelism(), loadAverage1m: load1!, loadAverage5m: load5!, loadAverage15m: load15! }
}

/** Free space of the filesystem holding `folder` (statfs). */
export async function storageOf(folder: string) {
  const stats = await statfs(folder)
  const total = stats.blocks * stats.bsize
  const free = stats.bfree * stats.bsize
  const available = stats.bavail * stats.bsize
  return { path: folder, totalBytes: total, freeBytes: free, availableBytes: available, usedPercent: total > 0 ? Math.round(((total - free) / total) * 1000) / 10 : 0 }
}

/** Whole seconds since a start time. */
export const secondsSince = (start: number, now: number) => Math.max(0, Math.floor((now - start) / 1000))
