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
  // The device has no accelerator (README of the machine); accelerator figures are null.
  const platform = `${model}, ${cpus.length} cores, ${memGiB} GiB, ${os.type()} ${os.release()} ${os.arch()}, Node ${process.version}, no accelerator`
  return { platformId, platform }
}
