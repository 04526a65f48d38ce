import { Type, type Static } from '@sinclair/typebox'
import { CameraId } from '../cameras/inputs.ts'
import type { Identity } from '../handler.ts'

/**
 * Live view (spec 4.10 Live stream): a session per viewer, its stream a fragmented MP4 copied
 * from the camera's one upstream connection (docs/recording-and-live-view.md "Live view"). `ctx.live` implements it
 * (runtime/live/).
 */
export const LIVE_PLAY_ROUTE = '/gtw/cwai/LiveStream/play'
export const LIVE_OVERLAY_ROUTE = '/gtw/cwai/LiveStream/overlay'
export const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const SessionId = Type.String({ pattern: SESSION_ID.source, description: 'The sessionId `request` answered.' })

export const LiveRequestInput = Type.Object({
  cameraId: CameraId,
  overlay: Type.Optional(Type.Boolean({ default: false, description: 'Also offer the boxes of the camera\'s stream task (overlayUrl, drawn by the player over the picture).' })),
}, { additionalProperties: false })
export type LiveRequestInput = Static<typeof LiveRequestInput>

export const LiveSessionInput = Type.Object({ sessionId: SessionId }, { additionalProperties: false })

/** What a player needs: `?id=` and `?token=` of the media routes. */
export const LiveMediaInput = Type.Object({
  id: SessionId,
  token: Type.Optional(Type.String({ maxLength: 64, description: 'The stream token in the URL `request` answered (instead of an mtk).' })),
}, { additionalProperties: false })

export interface LiveSessionView {
  sessionId: string
  cameraId: string
  /** GET: the stream, fragmented MP4 (H.264 copied from the camera), for `<video src>` or Media Source Extensions. */
  url: string
  /** GET: text/event-stream of the task's boxes; null without `overlay`. */
  overlayUrl: string | null
  /** For MediaSource.isTypeSupported / addSourceBuffer, e.g. `video/mp4; codecs="avc1.4d401e"`. */
  mimeType: string
  idleTimeoutMs: number
  /** ms since epoch: the session ends then unless keepAlive moves it. */
  expiresAt: number
}

export interface LiveService {
  /** Opens a session (StreamSourceUnsupported, LiveViewerLimit, LiveCodecUnsupported, LiveStreamUnavailable, CameraNotFound). */
  request(input: LiveRequestInput, identity: Identity): Promise<LiveSessionView>
  keepAlive(sessionId: string, identity: Identity): LiveSessionView
  stop(sessionId: string, identity: Identity): void
  /** The session's stream (replaces a stream the session already plays); sessions belong to the account that requested them. */
  play(sessionId: string, identity: Identity): Promise<Response>
  overlay(sessionId: string, identity: Identity): Response
}
