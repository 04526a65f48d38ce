import { randomUUID } from 'node:crypto'
import { ApiError, invalidParam, isApiError } from '../../shared/errors/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import type { AdapterChange, BackendType } from '../../shared/network/schemas.ts'
import type { ChangeOutcome, ChangeStatus, PendingChange } from '../../shared/network/types.ts'
import { validateAdapterConfig } from './validate.ts'
import { backendPlugins, detectBackend } from './backends/index.ts'
import type { BackendContext, NetworkBackend } from './backends/types.ts'
import { HostCommandError } from './host.ts'
import { readAdapterIpv4 } from './read.ts'
import type { NetworkStore } from './store.ts'
import { Mutex } from '../keyed-mutex.ts'

const PENDING_KEY = 'network.pendingChange'
const LAST_KEY = 'network.lastChange'
/** A rollback that failed (backend busy, command error) is tried again after this long. */
const ROLLBACK_RETRY_MS = 5000

type StoredChange = PendingChange & { snapshot: unknown }

export interface ChangeGuardOptions {
  store: NetworkStore
  context: BackendContext
  /** NETWORK_BACKEND: a type key, or '' to detect the host's. */
  backend: BackendType | ''
  confirmTimeoutMs: number
  now: () => number
  events: EventsService
  log: Logger
}

const reasonOf = (error: unknown) => (error instanceof HostCommandError ? error.stderr : String((error as Error).message)).trim()
const withoutSnapshot = ({ snapshot: _snapshot, ...change }: StoredChange): PendingChange => change

/** Why a backend failed, as the client should see it: not permitted, or failed. */
function refusal(error: unknown): ApiError {
  if (isApiError(error)) return error
  const reason = reasonOf(error)
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EACCES' || code === 'EPERM' || /not permitted|permission denied|not authorized|insufficient privileges/i.test(reason))
    return new ApiError('NetworkChangeNotPermitted', { details: { reason } })
  return new ApiError('NetworkChangeFailed', { details: { reason } })
}

/**
 * The confirm-or-rollback state machine of network changes (spec 4.10 Network):
 * idle → apply → pending → confirm (kept) | timeout or revert (previous configuration
 * restored) → idle. The pending change and its snapshot are stored before the backend is
 * touched, so a restart in the window still rolls back at the same deadline.
 */
export class ChangeGuard {
  private timer: NodeJS.Timeout | null = null
  // one transition at a time: apply, confirm, revert and the timeout never interleave
  private readonly queue = new Mutex()

  constructor(private readonly options: ChangeGuardOptions) {}

  private serial<T>(step: () => Promise<T>): Promise<T> {
    return this.queue.run(step)
  }

  private async backend(type?: BackendType): Promise<NetworkBackend> {
    const chosen = type ?? (this.options.backend || await detectBackend(this.options.context))
    if (!chosen) throw new ApiError('NetworkBackendUnavailable')
    return backendPlugins[chosen].create(this.options.context)
  }

  private pending() { return this.options.store.get<StoredChange>(PENDING_KEY) }

  private schedule(change: StoredChange, delayMs = change.confirmBy - this.options.now()) {
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = null
      void this.serial(() => this.rollback(change.changeId, 'timeout')).catch((error) => {
        if (isApiError(error) && error.id === 'NetworkChangeNotFound') return // confirmed or reverted meanwhile
        this.options.log.error({ err: (error as Error).message, changeId: change.changeId }, 'network rollback failed; retrying')
        this.schedule(change, ROLLBACK_RETRY_MS)
      })
    }, Math.max(0, delayMs))
  }

  /** Picks up a change left pending by the previous run: it rolls back at its own deadline. */
  async start() {
    const change = await this.pending()
    if (change) {
      this.options.log.warn({ changeId: change.changeId, adapter: change.adapter, confirmBy: change.confirmBy }, 'a network change from before the restart waits for confirmation')
      this.schedule(change)
    }
  }

  /** Stops the timer only: a pending change stays stored and rolls back after the next start. */
  stop() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  async status(): Promise<ChangeStatus> {
    const stored = await this.pending()
    return { pending: stored && withoutSnapshot(stored), last: await this.options.store.get<ChangeOutcome>(LAST_KEY), now: this.options.now() }
  }

  apply(change: AdapterChange, requestedBy: string | null): Promise<PendingChange> {
    return this.serial(async () => {
      const waiting = await this.pending()
      if (waiting) throw new ApiError('NetworkChangePending', { details: { changeId: waiting.changeId, confirmBy: waiting.confirmBy } })
      const { adapter, confirmTimeoutSeconds, ...config } = change
      validateAdapterConfig(config)
      const previousAddresses = await readAdapterIpv4(this.options.context.host, adapter)
      if (!previousAddresses) throw invalidParam('/adapter', 'is not an adapter of this device (or is the loopback)', { value: adapter })
      const backend = await this.backend()
      const snapshot = await backend.capture(adapter).catch((error) => { throw refusal(error) })
      const now = this.options.now()
      const stored: StoredChange = {
        changeId: randomUUID(), adapter, backend: backend.type, config, appliedAt: now,
        confirmBy: now + (confirmTimeoutSeconds === undefined ? this.options.confirmTimeoutMs : confirmTimeoutSeconds * 1000),
        requestedBy, previousAddresses, snapshot,
      }
      await this.options.store.set(PENDING_KEY, stored)
      try {
        await backend.apply(adapter, config)
      } catch (error) {
        await this.rollback(stored.changeId, 'apply failed').catch((restoreError) => {
          // it stays pending: the rollback is tried again at the deadline (or RevertChange)
          this.options.log.error({ err: (restoreError as Error).message }, 'restoring after a failed network change failed')
          this.schedule(stored)
        })
        throw refusal(error)
      }
      this.schedule(stored)
      await this.options.events.emit('network.changed', { changeId: stored.changeId, adapter, backend: backend.type, outcome: 'applied', requestedBy })
      return withoutSnapshot(stored)
    })
  }

  private async finish(change: StoredChange, outcome: ChangeOutcome['outcome'], reason: string | null): Promise<ChangeOutcome> {
    const last: ChangeOutcome = { changeId: change.changeId, adapter: change.adapter, backend: change.backend, outcome, reason, at: this.options.now() }
    await this.options.store.set(LAST_KEY, last)
    await this.options.store.delete(PENDING_KEY)
    return last
  }

  private async rollback(changeId: string, reason: 'timeout' | 'reverted' | 'apply failed'): Promise<ChangeOutcome> {
    const change = await this.pending()
    if (!change || change.changeId !== changeId) throw new ApiError('NetworkChangeNotFound', { details: { changeId } })
    const backend = await this.backend(change.backend)
    await backend.restore(change.adapter, change.snapshot)
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    const last = await this.finish(change, 'rolled-back', reason)
    this.options.log.warn({ changeId, adapter: change.adapter, reason }, 'network change rolled back')
    await this.options.events.emit('network.rolledBack', { changeId, adapter: change.adapter, backend: change.backend, reason })
    return last
  }

  /**
   * The addresses a confirmation must not come through: those the adapter held before the
   * change and gives up with it. A static change keeps only its `address`; what DHCP leased
   * is known only now, from the kernel (docs/network.md "Network", confirm from the new address).
   */
  private async givenUp(change: StoredChange): Promise<{ dropped: string[]; confirmAt: string[] }> {
    const confirmAt = change.config.mode === 'static' ? [change.config.address!] : await readAdapterIpv4(this.options.context.host, change.adapter) ?? []
    return { dropped: (change.previousAddresses ?? []).filter((a) => !confirmAt.includes(a)), confirmAt }
  }

  /** `through`: the device's address the confirmation arrived at (null: a transport without one). */
  confirm(changeId: string, through: string | null): Promise<ChangeOutcome> {
    return this.serial(async () => {
      const change = await this.pending()
      if (!change || change.changeId !== changeId) throw new ApiError('NetworkChangeNotFound', { details: { changeId } })
      const { dropped, confirmAt } = through === null ? { dropped: [], confirmAt: [] } : await this.givenUp(change)
      if (through !== null && dropped.includes(through)) throw new ApiError('NetworkConfirmFromOldAddress', {
        msgText: `This confirmation came through ${through}, which the change takes from ${change.adapter}: open the device at ${confirmAt.join(' or ') || 'its new address'} and confirm there before the deadline; the change stays pending.`,
        details: { changeId, adapter: change.adapter, through, confirmAt, confirmBy: change.confirmBy },
      })
      this.stop()
      const last = await this.finish(change, 'confirmed', null)
      await this.options.events.emit('network.changed', { changeId, adapter: change.adapter, backend: change.backend, outcome: 'confirmed', requestedBy: change.requestedBy })
      return last
    })
  }

  revert(changeId: string): Promise<ChangeOutcome> {
    return this.serial(() => this.rollback(changeId, 'reverted').catch((error) => {
      if (isApiError(error)) throw error
      throw new ApiError('NetworkChangeFailed', {
        msgText: 'Restoring the previous network configuration failed; the change stays pending and is rolled back again at its deadline.',
        details: { reason: reasonOf(error) },
      })
    }))
  }
}
