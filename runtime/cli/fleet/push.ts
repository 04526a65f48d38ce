import { DeviceClient } from '../../client/client.ts'
import { NetworkError } from '../../client/errors.ts'
import { fileResumeKey, type FileResumeStore, type fileSource } from '../../client/node.ts'
import { ROUTES } from '../../client/routes.ts'
import type { ManagedAlgorithmRow, UpgradeStatus } from '../../client/types.ts'
import { uploadFile } from '../../client/upload.ts'
import type { FleetBroker, FleetDevice } from './broker.ts'

/** How the CLI signs in on each device to upload a package (spec 4.12 uploads are HTTP only, spec 5.4 binds them to that session). */
export interface HttpAccess {
  account: string
  password: string
  store: FileResumeStore
  chunkSize?: number
  retries?: number
  /** Per HTTP answer and per MQTT answer. */
  timeoutMs: number
  onRetry?: (deviceId: string, attempt: number, error: Error) => void
}

type Source = Awaited<ReturnType<typeof fileSource>>

/** The first address of the device's registration that answers `Probe` (spec 4.9). */
async function reachable(device: FleetDevice, timeoutMs: number): Promise<string> {
  const urls = device.registration?.http?.urls ?? []
  if (urls.length === 0) throw new NetworkError(ROUTES.probe, new Error('its registration names no HTTP address (software without fleet support, or not listening yet)'), device.deviceId)
  for (const url of urls) {
    const answered = await fetch(url + ROUTES.probe, { method: 'POST', signal: AbortSignal.timeout(Math.min(timeoutMs, 5000)) }).then((r) => r.ok, () => false)
    if (answered) return url
  }
  throw new NetworkError(ROUTES.probe, new Error('no address of its registration answers Probe'), urls.join(', '))
}

/** Signs in on the device at its registered address and uploads the package for `purpose`; its resume identity is per device. */
async function uploadTo(device: FleetDevice, source: Source, purpose: 'upgrade' | 'algorithm', access: HttpAccess) {
  const client = new DeviceClient({ baseUrl: await reachable(device, access.timeoutMs) })
  await client.login(access.account, access.password)
  const upload = await uploadFile(client, source, {
    purpose, resumeKey: fileResumeKey(source, `${device.deviceId}/${access.account}`, purpose), store: access.store,
    chunkSize: access.chunkSize, retries: access.retries,
    onRetry: (attempt, error) => access.onRetry?.(device.deviceId, attempt, error),
  })
  return { client, uploadId: upload.uploadId }
}

export interface AlgorithmPushed {
  outcome: 'installed'
  url: string
  algorithms: Pick<ManagedAlgorithmRow, 'algorithmId' | 'algorithmName' | 'version'>[]
}

/** Installs an algorithm package (zip or tar.gz) on one device: upload, then `Algorithm/upload`. */
export async function pushAlgorithm(device: FleetDevice, source: Source, replace: boolean, access: HttpAccess): Promise<AlgorithmPushed> {
  const { client, uploadId } = await uploadTo(device, source, 'algorithm', access)
  const { algorithms } = await client.algorithmUpload({ uploadId, replace }, { timeoutMs: Math.max(access.timeoutMs, 120_000) })
  return { outcome: 'installed', url: client.baseUrl, algorithms: algorithms.map(({ algorithmId, algorithmName, version }) => ({ algorithmId, algorithmName, version })) }
}

export interface UpgradePushed {
  /** What the device's start-up script recorded (`timeout`: it did not register again in time). */
  outcome: 'installed' | 'rolled-back' | 'refused' | 'timeout' | 'unknown'
  url: string
  version: string
  fromVersion: string
  /** Of the registration after the restart: spec 4.11 confirms an upgrade by it, never by an answer alone. */
  softwareVersion: string | null
  reason: string | null
}

/**
 * Upgrades one device (spec 4.11): uploads the package, calls `Upgrade`, waits until the device
 * registers again as a new process (within `restartTimeoutMs`), then reads what its start-up
 * script recorded for this version (`UpgradeStatus` over MQTT) and the running version.
 */
export async function pushUpgrade(device: FleetDevice, source: Source, broker: FleetBroker, access: HttpAccess & { restartTimeoutMs: number }): Promise<UpgradePushed> {
  const { client, uploadId } = await uploadTo(device, source, 'upgrade', access)
  const startedAt = broker.device(device.deviceId)?.registration?.startedAt
  const staged = await client.upgrade(uploadId, { timeoutMs: Math.max(access.timeoutMs, 120_000) })
  const result = { url: client.baseUrl, version: staged.version, fromVersion: staged.fromVersion }
  const back = await broker.waitFor(device.deviceId, (d) => d.state === 'online' && !!d.registration && d.registration.startedAt !== startedAt, access.restartTimeoutMs)
  if (!back) return { ...result, outcome: 'timeout', softwareVersion: null, reason: `did not register again within ${access.restartTimeoutMs / 1000} s` }
  const answer = await broker.request(device.deviceId, ROUTES.upgradeStatus, {}, access.timeoutMs)
  const status = answer?.envelope.resCode === 1 ? answer.envelope.resData as UpgradeStatus : null
  const record = status?.history.find((h) => h.version === staged.version && Number(h.at) >= Number(staged.stagedAt))
  const softwareVersion = back.registration!.softwareVersion
  if (!record) return { ...result, outcome: 'unknown', softwareVersion, reason: 'the device registered again but reports no outcome for this version' }
  return { ...result, outcome: record.outcome, softwareVersion, reason: record.reason }
}
