import { ACTION_DELIVERY, type PolicyAction } from '../../shared/alarms/types.ts'
import type { AudioPlayer } from '../../shared/audio/types.ts'
import type { DeviceEvent, EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import { eventJson } from '../events/outbox.ts'
import { redactUrl } from '../../shared/events/present.ts'
import { postEvent, sleep } from '../events/webhook.ts'

export interface AlarmActionDeps {
  log: Logger
  events: Pick<EventsService, 'emit'>
  /** Publishes on the device's broker connection (runtime/events publish). */
  publish(topic: string, payload: string): Promise<void>
  audio: AudioPlayer
}

/** Deliveries waiting or running at most; past it an action fails at once (a flood of alarms to a dead receiver). */
const MAX_PENDING = 256

type Delivered = Exclude<PolicyAction, { type: 'clip' }>

/**
 * The actions of an alarm that go out after it is recorded (spec 4.10 Linkage / alarm policy):
 * the event POSTed to a webhook (signed like the event webhook), published to an MQTT topic,
 * a sound played on an audio column. Each runs in the background with ACTION_DELIVERY's
 * attempts, so the stream task's loop does not wait; one that fails every attempt is an
 * `alarm.actionFailed` event. `stop()` abandons what is left.
 */
export class AlarmActions {
  readonly #pending = new Set<Promise<void>>()
  readonly #stop = new AbortController()

  constructor(private readonly deps: AlarmActionDeps) {}

  dispatch(event: DeviceEvent, actions: readonly PolicyAction[], policyId: string): void {
    for (const action of actions) {
      if (action.type === 'clip') continue
      const run = this.#deliver(event, action, policyId).finally(() => this.#pending.delete(run))
      this.#pending.add(run)
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort()
    await Promise.allSettled([...this.#pending])
  }

  /** Reported like a failed delivery (also for actions taken elsewhere, the clip). */
  async failed(event: DeviceEvent, policyId: string, action: PolicyAction['type'], target: string, attempts: number, reason: string): Promise<void> {
    const alarmId = String(event.payload.alarmId)
    this.deps.log.warn({ alarmId, policyId, action, target, attempts, reason }, 'alarm action failed')
    await this.deps.events.emit('alarm.actionFailed', { alarmId, alarmEventId: event.id, policyId, action, target, attempts, reason })
      .catch((error: Error) => this.deps.log.error({ err: error.message }, 'alarm.actionFailed not written'))
  }

  async #deliver(event: DeviceEvent, action: Delivered, policyId: string): Promise<void> {
    const target = action.type === 'webhook' ? redactUrl(action.url) : action.type === 'mqtt' ? action.topic : action.columnId
    if (this.#pending.size > MAX_PENDING) return this.failed(event, policyId, action.type, target, 0, `more than ${MAX_PENDING} alarm actions pending`)
    const attempts = action.type === 'audio' ? 1 : ACTION_DELIVERY.attempts
    let reason = ''
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (this.#stop.signal.aborted) return
      reason = await this.#attempt(event, action).then(() => '', (error: Error) => error.message)
      if (!reason) return
      if (attempt < attempts) await sleep(ACTION_DELIVERY.backoffMs * 2 ** (attempt - 1), this.#stop.signal)
    }
    if (!this.#stop.signal.aborted) await this.failed(event, policyId, action.type, target, attempts, reason)
  }

  async #attempt(event: DeviceEvent, action: Delivered): Promise<void> {
    const body = eventJson(event)
    if (action.type === 'webhook') {
      const error = await postEvent(action.url, event, body, { secret: action.secret ?? '', timeoutMs: ACTION_DELIVERY.timeoutMs, signal: this.#stop.signal })
      if (error) throw new Error(error)
    } else if (action.type === 'mqtt') {
      await withTimeout(this.deps.publish(action.topic, body), ACTION_DELIVERY.timeoutMs, 'no PUBACK')
    } else {
      // Plays on one column queue in order; a column that does not answer fails it (AudioColumnUnreachable).
      await this.deps.audio.playOnColumn({ columnId: action.columnId, audioId: action.audioId, signal: this.#stop.signal })
        .catch((error: Error & { item?: { messageKey: string } }) => { throw new Error(error.item ? `${error.item.messageKey}: ${error.message}` : error.message) })
    }
  }
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms) })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}
