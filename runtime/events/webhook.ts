import { deadline } from '../abort.ts'
import type { Db } from '../db/client.ts'
import { webhookDeadLetters } from '../../shared/db/schema/index.ts'
import type { DeviceEvent, WebhookSettings } from '../../shared/events/types.ts'
import { EVENT_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signWebhook } from './webhook-signature.ts'
import type { Clock, Logger } from '../../shared/handler.ts'
import type { CursorStore } from './cursors.ts'
import type { DeliveryRecorder } from '../metrics/index.ts'
import { throttledSave } from './cursors.ts'
import { eventJson, type Outbox } from './outbox.ts'
import { Tail } from './tail.ts'

export interface WebhookDeps {
  url: string
  settings: WebhookSettings
  outbox: Outbox
  cursors: CursorStore
  db: Db
  clock: Clock
  log: Logger
  pollMs: number
  /** Called when an event is dead-lettered (operators' counter). */
  onDeadLetter?(): void
  /** Every attempt's outcome (docs/metrics.md "Metrics"). */
  record: DeliveryRecorder
}

/**
 * One webhook URL: every event is POSTed on its own as JSON (docs/events.md "Webhook"), signed with
 * HMAC-SHA256; a failed attempt (network error, timeout, non-2xx) is retried with
 * exponential backoff up to `maxAttempts`, then recorded in `webhook_dead_letters` and
 * skipped. Events go out in order; each URL has its own cursor, so a slow receiver delays
 * only itself.
 */
export class WebhookTarget {
  private tail: Tail | null = null
  private saveCursor: ReturnType<typeof throttledSave> | null = null
  private readonly stopController = new AbortController()
  lastError: string | null = null

  constructor(private readonly deps: WebhookDeps) {}

  get url(): string {
    return this.deps.url
  }

  get deliveredId(): number {
    return this.tail?.cursor ?? 0
  }

  async start(): Promise<void> {
    const { url, outbox, cursors, log, pollMs } = this.deps
    const channel = `webhook:${url}`
    const from = await cursors.getOrCreate(channel, outbox.lastId)
    this.saveCursor = throttledSave((id) => cursors.set(channel, id))
    this.tail = new Tail({
      name: channel,
      outbox,
      from,
      batch: 50,
      pollMs,
      log,
      deliver: async (events) => {
        for (const event of events) {
          await this.deliver(event)
          // Progress is kept event by event within a batch.
          await this.saveCursor!(event.id)
        }
      },
      delivered: (id) => this.saveCursor!(id),
    })
    this.tail.start()
  }

  private async deliver(event: DeviceEvent): Promise<void> {
    const { settings, clock, log } = this.deps
    const body = eventJson(event)
    const firstAttemptAt = clock.now()
    for (let attempt = 1; ; attempt++) {
      if (this.stopController.signal.aborted) throw new Error('stopping')
      const error = await this.attempt(event, body)
      if (error === null) {
        this.lastError = null
        this.deps.record('delivered')
        return
      }
      this.lastError = error
      const last = attempt >= settings.maxAttempts
      this.deps.record(last ? 'failed' : 'retried')
      if (last) {
        await this.deps.db.insert(webhookDeadLetters).values({ eventId: event.id, url: this.deps.url, attempts: attempt, lastError: error, firstAttemptAt, deadAt: clock.now() })
        log.warn({ eventId: event.id, kind: event.kind, url: this.deps.url, attempts: attempt, lastError: error }, 'webhook delivery dead-lettered')
        this.deps.onDeadLetter?.()
        return
      }
      const delay = Math.min(settings.backoffMaxMs, settings.backoffBaseMs * 2 ** (attempt - 1))
      log.debug({ eventId: event.id, url: this.deps.url, attempt, delay, error }, 'webhook attempt failed; backing off')
      await sleep(delay, this.stopController.signal)
    }
  }

  /** One POST; null on a 2xx answer, else the reason. */
  private attempt(event: DeviceEvent, body: string): Promise<string | null> {
    const { settings } = this.deps
    return postEvent(this.deps.url, event, body, { secret: settings.secret, timeoutMs: settings.timeoutMs, signal: this.stopController.signal })
  }

  async stop(): Promise<void> {
    this.stopController.abort()
    await this.tail?.stop()
    await this.saveCursor?.flush().catch(() => {})
  }
}

/**
 * One signed POST of an event (docs/events.md "Webhook"; alarm policies' webhook action too): null on a
 * 2xx answer, else the reason. Redirects are not followed.
 */
export async function postEvent(url: string, event: DeviceEvent, body: string, options: { secret: string; timeoutMs: number; signal: AbortSignal }): Promise<string | null> {
  const timestamp = Math.floor(Date.now() / 1000)
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [EVENT_ID_HEADER]: String(event.id),
    'x-event-kind': event.kind,
    [TIMESTAMP_HEADER]: String(timestamp),
  }
  if (options.secret) headers[SIGNATURE_HEADER] = signWebhook(options.secret, timestamp, body)
  const { signal, dispose } = deadline(options.timeoutMs, options.signal)
  try {
    const response = await fetch(url, { method: 'POST', headers, body, signal, redirect: 'manual' })
    await response.body?.cancel().catch(() => {})
    return response.ok ? null : `HTTP ${response.status}`
  } catch (error) {
    const e = error as Error
    return e.name === 'TimeoutError' ? `timeout after ${options.timeoutMs} ms` : (e.cause as Error)?.message ?? e.message
  } finally {
    dispose()
  }
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
