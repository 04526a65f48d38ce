import type { BackupInfo, BackupStatus, FactoryResetChallenge, RestoreStaged } from '../../shared/backup/types.ts'
export { BACKUP_UPLOAD_PURPOSE } from '../../shared/backup/types.ts'
import type { CallOptions, DeviceClient } from './client.ts'
import type { DownloadedFile } from './types.ts'

/** Backup, restore and factory reset (docs/system.md "Backup, restore and factory reset"), on the typed client. */
export const BACKUP_ROUTES = {
  create: '/gtw/cwai/System/CreateBackup',
  download: '/gtw/cwai/System/DownloadBackup',
  restore: '/gtw/cwai/System/Restore',
  status: '/gtw/cwai/System/BackupStatus',
  requestFactoryReset: '/gtw/cwai/System/RequestFactoryReset',
  factoryReset: '/gtw/cwai/System/FactoryReset',
} as const

export const createBackup = (client: DeviceClient, passphrase: string, options?: CallOptions): Promise<BackupInfo> =>
  client.call(BACKUP_ROUTES.create, { passphrase }, options)

export const downloadBackup = (client: DeviceClient, backupId: string, options?: CallOptions): Promise<DownloadedFile> =>
  client.download(BACKUP_ROUTES.download, { backupId }, options)

/** Validates the uploaded backup whole; on success the device restarts to apply it. */
export const restoreBackup = (client: DeviceClient, uploadId: string, passphrase: string, options?: CallOptions): Promise<RestoreStaged> =>
  client.call(BACKUP_ROUTES.restore, { uploadId, passphrase }, options)

export const backupStatus = (client: DeviceClient): Promise<BackupStatus> => client.call(BACKUP_ROUTES.status, {})

export const requestFactoryReset = (client: DeviceClient): Promise<FactoryResetChallenge> => client.call(BACKUP_ROUTES.requestFactoryReset, {})

export const factoryReset = (client: DeviceClient, confirmationToken: string): Promise<{ resetting: true }> =>
  client.call(BACKUP_ROUTES.factoryReset, { confirmationToken })

/**
 * After a restore or a factory reset: resolves once the device answers again after its restart
 * (it then refuses this session: the restore ended every session, the reset removed them).
 * Polled without the client's 401 handling, which would sign the console out with another reason.
 */
/** How long one poll of a restarting device may wait for its answer. */
const POLL_TIMEOUT_MS = 5000

export async function restartedWithoutSession(client: DeviceClient, { intervalMs = 1000, timeoutMs = 300_000 } = {}): Promise<void> {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
    // Each poll ends on its own: a request caught by the restart (a kept-alive connection to the
    // stopping process, a listener not yet answering) must not hold the loop.
    const status = await fetch(`${client.baseUrl}${BACKUP_ROUTES.status}`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...(client.mtk ? { mtk: client.mtk } : {}) }, body: '{}',
      signal: AbortSignal.timeout(POLL_TIMEOUT_MS),
    }).then((r) => r.status, () => 0)
    if (status === 401) return
  }
  throw new Error('The device did not come back within 5 minutes; reload the page to check it.')
}
