import path from 'node:path'
import { KeyedMutex } from '../keyed-mutex.ts'

/**
 * One staging at a time per data folder: the pending check, the validation and the write of
 * the pending record run as one step, so of two concurrent Upgrade calls the second sees the
 * first's pending upgrade (UpgradeInProgress) instead of staging too.
 *
 * The mutex lives on globalThis because every handler bundle inlines shared/ and a hot-reloaded
 * bundle must still share it. Only the running device stages; the supervisor installs while
 * the device is not running.
 */
const STAGING = Symbol.for('edge-ai-device.upgrade.staging-mutex')

export function withStagingLock<T>(dataPath: string, work: () => Promise<T>): Promise<T> {
  const holder = globalThis as { [STAGING]?: KeyedMutex }
  return (holder[STAGING] ??= new KeyedMutex()).run(path.resolve(dataPath), work)
}
