import path from 'node:path'
import { KeyedMutex } from '../keyed-mutex.ts'

/**
 * One staging at a time per data folder: the pending check, the validation and the write of
 * the pending record run as one step, so of two concurrent Upgrade calls the second sees the
 * first's pending upgrade (UpgradeInProgress) instead of staging too. Only the running device
 * stages (`ctx.upgrade`, runtime/upgrade/service.ts); the supervisor installs while the device
 * is not running.
 */
const staging = new KeyedMutex()

export function withStagingLock<T>(dataPath: string, work: () => Promise<T>): Promise<T> {
  return staging.run(path.resolve(dataPath), work)
}
