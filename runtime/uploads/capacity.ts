import { statfs } from 'node:fs/promises'
import type { Config } from '../../shared/config.ts'

export interface DiskSpace {
  /** Bytes available to this process on the staging filesystem (f_bavail). */
  availableBytes: number
  totalBytes: number
}

export type StatDisk = (dir: string) => Promise<DiskSpace>

export const statDisk: StatDisk = async (dir) => {
  const stats = await statfs(dir)
  return { availableBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize }
}

export interface Capacity {
  availableBytes: number
  reserveBytes: number
  reservedBySessionsBytes: number
  availableForNewUploadsBytes: number
}

/**
 * spec 2.5 / 8: the effective reserve is the larger of the fixed and the percentage reserve;
 * what new uploads may take is what is free after the reserve and in-flight reservations,
 * never negative.
 */
export function capacityOf(disk: DiskSpace, reservedBySessionsBytes: number, config: Config): Capacity {
  const reserveBytes = Math.max(config.uploadReserveBytes, Math.ceil(disk.totalBytes * config.uploadReservePercent / 100))
  return {
    availableBytes: disk.availableBytes,
    reserveBytes,
    reservedBySessionsBytes,
    availableForNewUploadsBytes: Math.max(0, disk.availableBytes - reserveBytes - reservedBySessionsBytes),
  }
}
