import { readFileSync } from 'node:fs'
import os from 'node:os'

/**
 * The machine a benchmark ran on, in the two forms the case file wants (spec 2.8):
 * `platformId` (pattern ^[a-z0-9-]+$) and a readable `platform`.
 */
export function describeMachine(): { platformId: string; platform: string } {
  const cpus = os.cpus()
  const memGiB = Math.round(os.totalmem() / 2 ** 30)
  const platformId = `${os.platform()}-${os.arch()}-${cpus.length}c-${memGiB}g`.toLowerCase().replace(/[^a-z0-9-]+/g, '-')
  const model = cpus[0]?.model.trim().replace(/\s+/g, ' ') || 'unknown CPU'
  // The device has no accelerator (docs/architecture.md "Facts": onnxruntime's CPU binaries only); accelerator figures are null.
  const platform = `${model}, ${cpus.length} cores, ${memGiB} GiB, ${os.type()} ${os.release()} ${os.arch()}, Node ${process.version}, no accelerator`
  return { platformId, platform }
}

/**
 * Share of CPU time the hypervisor gave to other guests (Linux `steal` in /proc/stat) since
 * `start()`, in percent of all CPU time; null where /proc/stat is not there. On a shared VM a
 * benchmark's ratios are only as good as this is small.
 */
export function stealMeter(): { percent(): number | null } {
  const read = () => {
    try {
      const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
      return { steal: fields[7] ?? 0, total: fields.reduce((sum, v) => sum + v, 0) }
    } catch {
      return null
    }
  }
  const start = read()
  return {
    percent() {
      const now = read()
      if (!start || !now || now.total === start.total) return null
      return +((100 * (now.steal - start.steal)) / (now.total - start.total)).toFixed(1)
    },
  }
}
