import path from 'node:path'

/**
 * One staging at a time per data folder: the pending check, the validation and the write of
 * the pending record run as one step, so of two concurrent Upgrade calls the second sees the
 * first's pending upgrade (UpgradeInProgress) instead of staging too.
 *
 * The queue lives on globalThis because every handler bundle inlines shared/ and a hot-reloaded
 * bundle must still share it. Only the running device stages; the supervisor installs while
 * the device is not running.
 */
const QUEUES = Symbol.for('edge-ai-device.upgrade.staging-queues')

function queues(): Map<string, Promise<unknown>> {
  const holder = globalThis as { [QUEUES]?: Map<string, Promise<unknown>> }
  return (holder[QUEUES] ??= new Map())
}

export async function withStagingLock<T>(dataPath: string, work: () => Promise<T>): Promise<T> {
  const key = path.resolve(dataPath)
  const all = queues()
  const run = (all.get(key) ?? Promise.resolve()).then(work, work)
  const tail = run.then(() => undefined, () => undefined)
  all.set(key, tail)
  try {
    return await run
  } finally {
    if (all.get(key) === tail) all.delete(key)
  }
}
