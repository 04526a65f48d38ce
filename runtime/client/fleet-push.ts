import { DeviceClient } from './client.ts'
import { NetworkError } from './errors.ts'
import { md5Hex } from './md5.ts'
import { ROUTES } from './routes.ts'
import { throttled, throttledChunkSize } from './throttle.ts'
import type { Envelope, ManagedAlgorithmRow, UpgradeStatus } from './types.ts'
import { uploadFile, type ResumeStore, type UploadSource } from './upload.ts'

/**
 * Pushing a package to one device of a fleet (docs/deployment.md "Several devices", "Fleet
 * view"): `device-cli fleet push-*` and the console's Fleet view (through the device's
 * `Fleet/push`) both run these, so there is one implementation of the upload, the install and
 * the confirmation of an upgrade.
 */

/** How often an upgraded device's UpgradeStatus is read while its new version is on probation. */
const PROBATION_POLL_MS = 1000

/** A device as its retained registration on the broker names it (docs/events.md "MQTT"). */
export interface PushTarget {
  deviceId: string
  state: 'online' | 'offline' | 'unknown'
  registration: { softwareVersion: string; startedAt?: string; http?: { urls?: string[] } | null } | null
}

/** What a push needs of the broker: the devices' registrations and the request transport (spec 5.6). */
export interface FleetLink {
  device(deviceId: string): PushTarget | null
  /** Resolves with the device once `match` holds for it; null after `timeoutMs`. */
  waitFor(deviceId: string, match: (device: PushTarget) => boolean, timeoutMs: number): Promise<PushTarget | null>
  /** Runs a route on the device through its request topic; null when no answer came within `timeoutMs`. */
  request(deviceId: string, path: string, body: unknown, timeoutMs: number): Promise<{ status: number; envelope: Envelope } | null>
}

/** Where a push is on one device. */
export type PushPhase = 'connecting' | 'uploading' | 'installing' | 'restarting' | 'confirming'

/** How a push signs in on each device to upload a package (spec 4.12 uploads are HTTP only, spec 5.4 binds them to that session). */
export interface HttpAccess {
  account: string
  /** The MD5 digest of the password, as it travels (spec 5.8). */
  pwdMd5: string
  store: ResumeStore
  /** The resume key of the file (with the device and the account added per device). */
  fileKey: string
  chunkSize?: number
  /** Upload rate per device, bytes per second (0 or absent: as fast as the link goes); chunks then hold one second of it. */
  maxBytesPerSecond?: number
  retries?: number
  /** Per HTTP answer and per MQTT answer. */
  timeoutMs: number
  onRetry?: (deviceId: string, attempt: number, error: Error) => void
  /** Each phase as it starts; `uploading` again with the share of the file sent (0..100). */
  onPhase?: (deviceId: string, phase: PushPhase, percent?: number) => void
}

/** The first address of the device's registration that answers `Probe` (spec 4.9); only http(s) addresses. */
async function reachable(device: PushTarget, timeoutMs: number): Promise<string> {
  const urls = (device.registration?.http?.urls ?? []).filter((url) => /^https?:\/\/[^/]+$/.test(url))
  if (urls.length === 0) throw new NetworkError(ROUTES.probe, new Error('its registration names no HTTP address (software without fleet support, or not listening yet)'), device.deviceId)
  for (const url of urls) {
    const answered = await fetch(url + ROUTES.probe, { method: 'POST', signal: AbortSignal.timeout(Math.min(timeoutMs, 5000)) }).then((r) => r.ok, () => false)
    if (answered) return url
  }
  throw new NetworkError(ROUTES.probe, new Error('no address of its registration answers Probe'), urls.join(', '))
}

/** Signs in on the device at its registered address and uploads the package for `purpose`; its resume identity is per device. */
async function uploadTo(device: PushTarget, source: UploadSource, purpose: 'upgrade' | 'algorithm', access: HttpAccess) {
  access.onPhase?.(device.deviceId, 'connecting')
  const client = new DeviceClient({ baseUrl: await reachable(device, access.timeoutMs) })
  await client.loginDigest(access.account, access.pwdMd5)
  access.onPhase?.(device.deviceId, 'uploading', 0)
  const rate = access.maxBytesPerSecond ?? 0
  // Throttled: chunks small enough that the device's session never idles out between two (throttle.ts).
  const capabilities = rate > 0 ? await client.uploadCapabilities() : undefined
  const upload = await uploadFile(client, rate > 0 ? throttled(source, rate) : source, {
    purpose, resumeKey: md5Hex(JSON.stringify([access.fileKey, device.deviceId, access.account, purpose])), store: access.store,
    chunkSize: capabilities ? Math.min(access.chunkSize ?? Infinity, throttledChunkSize(rate, capabilities.idleTimeoutMs)) : access.chunkSize,
    capabilities, retries: access.retries,
    onRetry: (attempt, error) => access.onRetry?.(device.deviceId, attempt, error),
    onProgress: (p) => access.onPhase?.(device.deviceId, 'uploading', p.totalBytes ? Math.floor((100 * p.sentBytes) / p.totalBytes) : 100),
  })
  return { client, uploadId: upload.uploadId }
}

export interface AlgorithmPushed {
  outcome: 'installed'
  url: string
  algorithms: Pick<ManagedAlgorithmRow, 'algorithmId' | 'algorithmName' | 'version'>[]
}

/** Installs an algorithm package (zip or tar.gz) on one device: upload, then `Algorithm/upload`. */
export async function pushAlgorithm(device: PushTarget, source: UploadSource, replace: boolean, access: HttpAccess): Promise<AlgorithmPushed> {
  const { client, uploadId } = await uploadTo(device, source, 'algorithm', access)
  access.onPhase?.(device.deviceId, 'installing')
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
export async function pushUpgrade(device: PushTarget, source: UploadSource, link: FleetLink, access: HttpAccess & { restartTimeoutMs: number }): Promise<UpgradePushed> {
  const { client, uploadId } = await uploadTo(device, source, 'upgrade', access)
  const startedAt = link.device(device.deviceId)?.registration?.startedAt
  access.onPhase?.(device.deviceId, 'installing')
  const staged = await client.upgrade(uploadId, { timeoutMs: Math.max(access.timeoutMs, 120_000) })
  const result = { url: client.baseUrl, version: staged.version, fromVersion: staged.fromVersion }
  access.onPhase?.(device.deviceId, 'restarting')
  const back = await link.waitFor(device.deviceId, (d) => d.state === 'online' && !!d.registration && d.registration.startedAt !== startedAt, access.restartTimeoutMs)
  if (!back) return { ...result, outcome: 'timeout', softwareVersion: null, reason: `did not register again within ${access.restartTimeoutMs / 1000} s` }
  access.onPhase?.(device.deviceId, 'confirming')
  // docs/system.md "Rollback and power cuts": the first start of the new version is on probation
  // (readiness and Probe within UPGRADE_PROBATION_MS, else it is rolled back); the outcome is
  // final only once the probation has ended, so it is read until then (within restartTimeoutMs).
  const deadline = Date.now() + access.restartTimeoutMs
  let status: UpgradeStatus | null
  for (;;) {
    const answer = await link.request(device.deviceId, ROUTES.upgradeStatus, {}, access.timeoutMs)
    status = answer?.envelope.resCode === 1 ? answer.envelope.resData as UpgradeStatus : null
    if ((status && !status.probation) || Date.now() >= deadline) break
    await new Promise((resolve) => setTimeout(resolve, PROBATION_POLL_MS))
  }
  const record = status?.history.find((h) => h.version === staged.version && Number(h.at) >= Number(staged.stagedAt))
  const softwareVersion = status?.softwareVersion ?? link.device(device.deviceId)?.registration?.softwareVersion ?? back.registration!.softwareVersion
  if (status?.probation) return { ...result, outcome: 'timeout', softwareVersion, reason: `still on probation after ${access.restartTimeoutMs / 1000} s` }
  if (!record) return { ...result, outcome: 'unknown', softwareVersion, reason: 'the device registered again but reports no outcome for this version' }
  return { ...result, outcome: record.outcome, softwareVersion, reason: record.reason }
}
