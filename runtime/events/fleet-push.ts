import { randomUUID } from 'node:crypto'
import { ApiError } from '../../shared/errors/index.ts'
import type { FleetPush, FleetPushRequest, FleetPushRow } from '../../shared/fleet/types.ts'
import type { Logger } from '../../shared/handler.ts'
import { DeviceError, NetworkError } from '../client/errors.ts'
import { pushAlgorithm, pushUpgrade, type FleetLink, type HttpAccess } from '../client/fleet-push.ts'
import { fileSource } from '../client/node.ts'
import type { ResumeRecord, ResumeStore } from '../client/upload.ts'

/** Pushes running at once on this device; more are refused (FleetPushBusy). */
export const MAX_RUNNING_PUSHES = 2
/** Finished pushes kept for Fleet/pushStatus (the oldest go first). */
const KEEP_FINISHED = 16
/** Devices one push handles at once (as the CLI's default --parallel). */
const PARALLEL = 4
const ANSWER_TIMEOUT_MS = 30_000
const RESTART_TIMEOUT_MS = 300_000
const RETRIES = 3

/** Resume identities of the pushes of this process: a push does not outlive it, so memory is enough. */
class MemoryResumeStore implements ResumeStore {
  private readonly records = new Map<string, ResumeRecord>()
  async load(key: string) { return this.records.get(key) ?? null }
  async save(key: string, record: ResumeRecord) { this.records.set(key, record) }
  async remove(key: string) { this.records.delete(key) }
}

/** A failure on one device as its row shows it: the device's own message item first (spec 7). */
function failure(row: FleetPushRow, error: unknown) {
  row.phase = 'failed'
  row.ok = false
  if (error instanceof DeviceError) {
    const item = error.item
    row.outcome = item?.messageKey ?? `HTTP ${error.status}`
    row.error = {
      messageKey: item?.messageKey ?? null, msgText: item?.msgText ?? error.message, recommendedAction: item?.recommendedAction ?? null,
      details: item?.details ?? null, httpStatus: error.status,
    }
  } else {
    row.outcome = error instanceof NetworkError ? 'unreachable' : 'failed'
    row.error = { messageKey: null, msgText: (error as Error)?.message ?? String(error), recommendedAction: null, details: null, httpStatus: null }
  }
}

/**
 * Packages pushed from the console's Fleet view to several devices (docs/deployment.md "Fleet
 * view"): the package uploaded to this device is sent to each target with the CLI's own push
 * (runtime/client/fleet-push.ts), at the HTTP address of the target's retained registration
 * only — never an address the request names. Each row tells its phase as it changes.
 */
export class FleetPushes {
  private readonly pushes = new Map<string, FleetPush>()
  private readonly store = new MemoryResumeStore()
  private running = 0

  constructor(private readonly deps: { link: FleetLink; selfId: string; log: Logger; maxBytesPerSecond?: number }) {}

  /** FleetPushBusy while MAX_RUNNING_PUSHES pushes run. */
  assertRoom(): void {
    if (this.running >= MAX_RUNNING_PUSHES) throw new ApiError('FleetPushBusy', { details: { limit: MAX_RUNNING_PUSHES } })
  }

  start(request: FleetPushRequest): FleetPush {
    this.assertRoom()
    const push: FleetPush = {
      pushId: randomUUID(), kind: request.kind, fileName: request.file.originalFilename, size: request.file.size,
      startedAt: new Date().toISOString(), finishedAt: null,
      rows: request.deviceIds.map((deviceId) => ({ deviceId, phase: 'queued', percent: null, ok: null, outcome: null, error: null, detail: null })),
    }
    this.pushes.set(push.pushId, push)
    const finished = [...this.pushes.values()].filter((p) => p.finishedAt)
    for (const old of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) this.pushes.delete(old.pushId)
    this.running++
    void this.run(push, request)
      .catch((error: unknown) => {
        for (const row of push.rows) if (row.ok === null) failure(row, error)
      })
      .finally(async () => {
        this.running--
        push.finishedAt = new Date().toISOString()
        await request.file.release().catch(() => {})
        this.deps.log.info({ pushId: push.pushId, results: push.rows.map((r) => [r.deviceId, r.outcome]) }, 'fleet push finished')
      })
    return structuredClone(push)
  }

  status(pushId: string): FleetPush {
    const push = this.pushes.get(pushId)
    if (!push) throw new ApiError('FleetPushNotFound', { details: { pushId } })
    return structuredClone(push)
  }

  private async run(push: FleetPush, request: FleetPushRequest) {
    // The staged file is read chunk by chunk from disk; its name is the one the client gave (spec 4.11 checks it).
    const source = { ...(await fileSource(request.file.path)), name: request.file.originalFilename }
    const row = (deviceId: string) => push.rows.find((r) => r.deviceId === deviceId)!
    const access: HttpAccess = {
      account: request.account, pwdMd5: request.pwdMd5, store: this.store, fileKey: request.file.uploadId,
      retries: RETRIES, timeoutMs: ANSWER_TIMEOUT_MS, maxBytesPerSecond: this.deps.maxBytesPerSecond ?? 0,
      onPhase: (deviceId, phase, percent) => {
        const r = row(deviceId)
        r.phase = phase
        if (percent !== undefined) r.percent = percent
      },
      onRetry: (deviceId, attempt, error) => this.deps.log.warn({ pushId: push.pushId, deviceId, attempt, err: { message: error.message } }, 'fleet push: connection lost, resuming'),
    }
    const one = async (r: FleetPushRow) => {
      const device = this.deps.link.device(r.deviceId)
      const skip = (outcome: string, msgText: string) => Object.assign(r, { phase: 'failed', ok: false, outcome, error: { messageKey: null, msgText, recommendedAction: null, details: null, httpStatus: null } })
      if (!device) return skip('unknown-device', 'No device with this id is announced on the broker.')
      // As the CLI: an offline device is reported, not contacted.
      if (device.state !== 'online') return skip('offline', 'The device is offline on the broker.')
      // This device restarting would end the push itself: it is upgraded from its own System page.
      if (request.kind === 'upgrade' && r.deviceId === this.deps.selfId) return skip('self-upgrade', 'This is the device the console runs on: upgrade it from its System page.')
      try {
        if (request.kind === 'algorithm') {
          const pushed = await pushAlgorithm(device, source, request.replace, access)
          Object.assign(r, { phase: 'done', ok: true, outcome: pushed.outcome, detail: pushed.algorithms.map((a) => `${a.algorithmId} ${a.version}`).join(', ') })
        } else {
          const pushed = await pushUpgrade(device, source, this.deps.link, { ...access, restartTimeoutMs: RESTART_TIMEOUT_MS })
          // spec 4.11: installed only when the running version is the package's.
          const ok = pushed.outcome === 'installed' && pushed.softwareVersion === pushed.version
          Object.assign(r, {
            phase: ok ? 'done' : 'failed', ok, outcome: pushed.outcome,
            detail: `${pushed.fromVersion} → ${pushed.softwareVersion ?? '?'}${pushed.reason ? ` (${pushed.reason})` : ''}`,
          })
        }
      } catch (error) {
        failure(r, error)
      }
    }
    let next = 0
    await Promise.all(Array.from({ length: Math.min(PARALLEL, push.rows.length) }, async () => {
      while (next < push.rows.length) await one(push.rows[next++]!)
    }))
  }
}
