import { randomUUID } from 'node:crypto'
import type { Config } from '../../shared/config.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type { StreamTokenService } from '../../shared/auth/stream-tokens.ts'
import type { StreamTasksService } from '../../shared/streams/types.ts'
import { LIVE_OVERLAY_ROUTE, LIVE_PLAY_ROUTE, type LiveRequestInput, type LiveService, type LiveSessionView } from '../../shared/live/types.ts'
import type { CameraService } from '../cameras/service.ts'
import { ffmpegBinary } from '../cameras/ffmpeg.ts'
import { overlayStream } from './overlay.ts'
import { LiveTap, type Viewer } from './tap.ts'
import { viewerStream } from './viewer-stream.ts'

export interface LiveServiceOptions {
  config: Config
  /** Expiry times (the stream tokens' clock); the idle timers are real time. */
  clock: Clock
  log: Logger
  cameras: CameraService
  streams: StreamTasksService
  streamTokens: StreamTokenService
  events: EventsService
}

interface Session {
  id: string
  cameraId: string
  accountName: string
  overlay: boolean
  playToken: string
  overlayToken: string | null
  expiresAt: number
  timer: NodeJS.Timeout
  /** What ends the streams the session serves now. */
  viewer: { viewer: Viewer; tap: LiveTap } | null
  endOverlay: (() => void) | null
}

const withQuery = (route: string, id: string, token: string) => `${route}?id=${id}&token=${token}`

/**
 * `ctx.live` (spec 4.10 Live stream): viewer sessions on one LiveTap per camera. A session
 * lives LIVE_IDLE_TIMEOUT_MS after its request or last keep-alive; its media URLs carry stream
 * tokens valid exactly as long. The tap runs while the camera has sessions.
 */
export class LiveViewService implements LiveService {
  private readonly sessions = new Map<string, Session>()
  private readonly taps = new Map<string, LiveTap>()
  /** Requests waiting for their camera's stream, counted against the limits. */
  private readonly opening = new Map<string, number>()
  private readonly binary: string

  constructor(private readonly options: LiveServiceOptions) {
    this.binary = ffmpegBinary(options.config.ffmpegPath)
    options.cameras.onRemove((cameraId) => this.endCamera(cameraId, 'cameraDeleted'))
    options.cameras.onSourceChange((cameraId) => { void this.taps.get(cameraId)?.restart() })
  }

  /** Ends every session as soon as the device starts stopping, so open streams do not hold the HTTP server's shutdown. */
  start(): void {
    this.options.events.subscribe(['device.stopping'], () => this.stopAll())
  }

  async request(input: LiveRequestInput, identity: Identity): Promise<LiveSessionView> {
    const { cameras, config } = this.options
    const sourceType = await cameras.sourceType(input.cameraId)
    if (sourceType !== 'rtsp' && sourceType !== 'file')
      throw new ApiError('StreamSourceUnsupported', { details: { cameraId: input.cameraId, sourceType } })
    const opening = this.opening.get(input.cameraId) ?? 0
    const onCamera = [...this.sessions.values()].filter((s) => s.cameraId === input.cameraId).length + opening
    if (onCamera >= config.liveMaxViewersPerCamera)
      throw new ApiError('LiveViewerLimit', { details: { scope: 'camera', cameraId: input.cameraId, limit: config.liveMaxViewersPerCamera } })
    if (this.sessions.size + [...this.opening.values()].reduce((a, b) => a + b, 0) >= config.liveMaxSessions)
      throw new ApiError('LiveViewerLimit', { details: { scope: 'device', limit: config.liveMaxSessions } })
    this.opening.set(input.cameraId, opening + 1)
    const tap = this.tap(input.cameraId)
    let mimeType: string | null = null
    let failed: unknown = null
    try {
      mimeType = await tap.ready(config.cameraConnectTimeoutMs + 5000)
    } catch (error) {
      failed = error
    }
    const left = (this.opening.get(input.cameraId) ?? 1) - 1
    if (left > 0) this.opening.set(input.cameraId, left)
    else this.opening.delete(input.cameraId)
    if (!mimeType) {
      await this.stopTapIfUnused(input.cameraId)
      throw failed
    }
    const id = randomUUID()
    const expiresAt = this.options.clock.now() + config.liveIdleTimeoutMs
    const session: Session = {
      id, cameraId: input.cameraId, accountName: identity.accountName, overlay: input.overlay === true, expiresAt,
      playToken: this.options.streamTokens.grant(LIVE_PLAY_ROUTE, id, identity, expiresAt),
      overlayToken: input.overlay ? this.options.streamTokens.grant(LIVE_OVERLAY_ROUTE, id, identity, expiresAt) : null,
      timer: this.expiry(id), viewer: null, endOverlay: null,
    }
    this.sessions.set(id, session)
    this.options.log.info({ sessionId: id, cameraId: input.cameraId, overlay: session.overlay, sessions: this.sessions.size }, 'live view session opened')
    return this.view(session, mimeType)
  }

  keepAlive(sessionId: string, identity: Identity): LiveSessionView {
    const session = this.own(sessionId, identity)
    session.expiresAt = this.options.clock.now() + this.options.config.liveIdleTimeoutMs
    this.options.streamTokens.extend(session.playToken, session.expiresAt)
    if (session.overlayToken) this.options.streamTokens.extend(session.overlayToken, session.expiresAt)
    clearTimeout(session.timer)
    session.timer = this.expiry(sessionId)
    return this.view(session, this.taps.get(session.cameraId)?.mimeType ?? null)
  }

  stop(sessionId: string, identity: Identity): void {
    this.own(sessionId, identity)
    this.end(sessionId, 'stopped')
  }

  async play(sessionId: string, identity: Identity): Promise<Response> {
    const session = this.own(sessionId, identity)
    const tap = this.tap(session.cameraId)
    // Between upstream runs (a reconnect) the player waits for the next key frame.
    await tap.ready(this.options.config.cameraConnectTimeoutMs + 5000)
    if (this.sessions.get(sessionId) !== session) throw this.gone(sessionId, 'stopped')
    // One stream per session: a player that reconnects replaces its previous stream.
    this.endViewer(session)
    const { stream, viewer } = viewerStream(() => {
      tap.detach(viewer)
      if (session.viewer?.viewer === viewer) session.viewer = null
    })
    if (!tap.attach(viewer)) throw new ApiError('LiveStreamUnavailable', { details: { reason: 'the camera stream restarted; retry' } })
    session.viewer = { viewer, tap }
    return new Response(stream, { headers: { 'Content-Type': 'video/mp4', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } })
  }

  overlay(sessionId: string, identity: Identity): Response {
    const session = this.own(sessionId, identity)
    if (!session.overlay) throw this.gone(sessionId, 'requested without overlay')
    session.endOverlay?.()
    const { stream, end } = overlayStream(
      () => this.options.streams.latestResult(session.cameraId),
      (pts) => session.viewer ? session.viewer.tap.mediaTime(session.viewer.viewer, pts) : null,
      () => { session.endOverlay = null },
    )
    session.endOverlay = end
    return new Response(stream, { headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } })
  }

  /** The live ffmpeg of a camera (tests: one per camera however many viewers). */
  tapPid(cameraId: string): number | null {
    return this.taps.get(cameraId)?.pid ?? null
  }

  async stopAll(): Promise<void> {
    for (const id of [...this.sessions.keys()]) this.end(id, 'device stopping')
    await Promise.all([...this.taps.keys()].map((cameraId) => this.stopTapIfUnused(cameraId)))
  }

  private view(session: Session, mimeType: string | null): LiveSessionView {
    return {
      sessionId: session.id,
      cameraId: session.cameraId,
      url: withQuery(LIVE_PLAY_ROUTE, session.id, session.playToken),
      overlayUrl: session.overlayToken ? withQuery(LIVE_OVERLAY_ROUTE, session.id, session.overlayToken) : null,
      mimeType: mimeType ?? 'video/mp4',
      idleTimeoutMs: this.options.config.liveIdleTimeoutMs,
      expiresAt: session.expiresAt,
    }
  }

  private expiry(sessionId: string): NodeJS.Timeout {
    const timer = setTimeout(() => this.end(sessionId, 'idle'), this.options.config.liveIdleTimeoutMs)
    timer.unref()
    return timer
  }

  private get(sessionId: string): Session {
    const session = this.sessions.get(sessionId)
    if (!session) throw this.gone(sessionId, 'not open')
    return session
  }

  /** Sessions belong to the account that requested them. */
  private own(sessionId: string, identity: Identity): Session {
    const session = this.get(sessionId)
    if (session.accountName !== identity.accountName) throw this.gone(sessionId, 'not open')
    return session
  }

  private gone(sessionId: string, reason: string): ApiError {
    return new ApiError('LiveSessionNotFound', { details: { sessionId, reason } })
  }

  private tap(cameraId: string): LiveTap {
    let tap = this.taps.get(cameraId)
    if (!tap) {
      const { config, cameras, log } = this.options
      tap = new LiveTap({
        binary: this.binary, input: () => cameras.copyInput(cameraId, { wallclock: true }),
        connectTimeoutMs: config.cameraConnectTimeoutMs, stallTimeoutMs: config.cameraStallTimeoutMs,
        reconnectMinMs: config.cameraReconnectMinMs, reconnectMaxMs: config.cameraReconnectMaxMs,
        log: log.child({ cameraId, component: 'live' }),
      })
      this.taps.set(cameraId, tap)
    }
    return tap
  }

  private endViewer(session: Session): void {
    const current = session.viewer
    session.viewer = null
    if (!current) return
    current.tap.detach(current.viewer)
    current.viewer.end()
  }

  private end(sessionId: string, reason: string): void {
    const session = this.sessions.get(sessionId)
    if (!session) return
    this.sessions.delete(sessionId)
    clearTimeout(session.timer)
    this.options.streamTokens.revoke(session.playToken)
    if (session.overlayToken) this.options.streamTokens.revoke(session.overlayToken)
    this.endViewer(session)
    session.endOverlay?.()
    this.options.log.info({ sessionId, cameraId: session.cameraId, reason }, 'live view session ended')
    void this.stopTapIfUnused(session.cameraId)
  }

  private endCamera(cameraId: string, reason: string): void {
    for (const session of [...this.sessions.values()]) if (session.cameraId === cameraId) this.end(session.id, reason)
  }

  private async stopTapIfUnused(cameraId: string): Promise<void> {
    if ([...this.sessions.values()].some((s) => s.cameraId === cameraId) || this.opening.has(cameraId)) return
    const tap = this.taps.get(cameraId)
    this.taps.delete(cameraId)
    await tap?.stop()
  }
}
