import type { MqttClient } from 'mqtt'
import { ApiError } from '../../shared/errors/index.ts'
import { failure, type Envelope } from '../../shared/envelope.ts'
import type { Identity, Logger, Services } from '../../shared/handler.ts'
import { bodyTooLargeError } from '../http/body-limit.ts'
import { runHandler } from '../http/dispatch.ts'
import type { RouteEntry } from '../http/route-table.ts'
import type { InputValidator } from '../http/validate.ts'

/** What MQTT requests are routed into: the HTTP route table and its validator (one instance). */
export interface RequestRouter {
  lookup(path: string): RouteEntry | undefined
  validator: InputValidator
}

// spec 5.6: MQTT requests run with a trusted internal transport context; no mtk check.
const MQTT_IDENTITY: Identity = { userId: 'mqtt', accountName: 'mqtt', sessionId: null, transport: 'mqtt', passwordChangeRequired: false }

export interface MqttRequestDeps {
  services: () => Services
  router: RequestRouter | null
  log: Logger
  /** Requests run at once; more are refused (MqttBusy) rather than queued without bound. */
  maxRequestsInFlight: number
  /** spec 8: the JSON request body limit, which a request's payload is held to as over HTTP. */
  maxRequestBytes: number
}

/**
 * MQTT requests (spec 5.6, docs/events.md "MQTT"): a request from the device's request topic
 * runs through the same route table, validator and handlers as over HTTP (`runHandler`), with
 * a trusted internal identity, and its envelope is answered on the response topic.
 */
export class MqttRequests {
  private readonly inflight = new Set<AbortController>()

  constructor(private readonly deps: MqttRequestDeps) {}

  /**
   * Runs one request from the request topic and answers on `responseTopic` of `client`.
   * `registered`: the channel's connection and registration are complete.
   */
  async handle(client: MqttClient, responseTopic: string, registered: boolean, payload: Buffer) {
    let request: { requestId?: unknown; path?: unknown; body?: unknown } = {}
    const tooLarge = payload.length > this.deps.maxRequestBytes
    try {
      if (!tooLarge) request = JSON.parse(payload.toString('utf8'))
    } catch {
      // answered below as InvalidParam
    }
    const requestId = typeof request?.requestId === 'string' && request.requestId.length <= 128 ? request.requestId : null
    const path = typeof request?.path === 'string' ? request.path : null
    const answer = (status: number, envelope: Envelope) =>
      client.publishAsync(responseTopic, JSON.stringify({ requestId, path, status, envelope }), { qos: 1 })
        .catch((error) => this.deps.log.warn({ err: { message: (error as Error).message }, requestId }, 'mqtt response not published'))
    const refuse = (error: ApiError) => answer(error.httpStatus, failure([error.item]))

    // spec 5.6: requests run only once the connection and the registration are complete.
    if (!registered) return refuse(new ApiError('MqttNotRegistered', { details: { requestId } }))
    if (tooLarge) return refuse(bodyTooLargeError(this.deps.maxRequestBytes, payload.length, false))
    if (!requestId) return refuse(new ApiError('InvalidParam', { details: { field: '/requestId', reason: 'must be a string of at most 128 characters' } }))
    if (!path) return refuse(new ApiError('InvalidParam', { details: { field: '/path', reason: 'must be a route path' } }))
    const entry = this.deps.router?.lookup(path)
    if (!entry) return refuse(new ApiError('RouteNotFound', { details: { path } }))
    if (entry.route.body === 'multipart')
      return refuse(new ApiError('UnsupportedMediaType', { details: { expected: 'HTTP multipart/form-data', received: 'mqtt' } }))
    if (this.inflight.size >= this.deps.maxRequestsInFlight) return refuse(new ApiError('MqttBusy', { details: { requestId, limit: this.deps.maxRequestsInFlight } }))
    const controller = new AbortController()
    this.inflight.add(controller)
    try {
      const body = request.body === undefined ? {} : request.body
      const outcome = await runHandler({ services: this.deps.services(), validator: this.deps.router!.validator }, entry, body,
        { identity: MQTT_IDENTITY, requestId: `mqtt-${requestId}`, clientAddress: null, localAddress: null, request: null, signal: controller.signal })
      if (outcome instanceof Response) {
        await outcome.body?.cancel()
        return refuse(new ApiError('NotSupported', { details: { reason: 'file responses are served over HTTP only', path } }))
      }
      return answer(outcome.status, outcome.envelope)
    } finally {
      this.inflight.delete(controller)
    }
  }

  /** Aborts every request still running (the channel stops). */
  abortAll(): void {
    for (const controller of this.inflight) controller.abort()
  }
}
