import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { DeviceError } from '../../client/errors.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { labelPlace, medianGap, movedTo, resultForFrame, type Match, type OverlayResult } from '../overlay-match.ts'

interface Camera { cameraId: string; cameraName: string; sourceType: string; status: string }
interface LiveSession { sessionId: string; url: string; overlayUrl: string | null; idleTimeoutMs: number }
/** What requestVideoFrameCallback tells (Chromium, Safari; typed here as lib.dom may lack it). */
interface FrameMetadata { mediaTime: number }
type FrameVideo = HTMLVideoElement & { requestVideoFrameCallback?(cb: (now: number, meta: FrameMetadata) => void): number; cancelVideoFrameCallback?(handle: number): void }

/** Cameras with a stream the device copies (docs/recording-and-live-view.md "Live view"). */
const PLAYABLE = ['rtsp', 'file']
/** Tile widths the size buttons step through (px; never wider than the wall). */
const TILE_WIDTHS = [320, 480, 640, 960, 1280]
const DEFAULT_SIZE = 1
/** The player stays at least this far behind the newest frame it has, so a frame's result is there when it is shown. */
const MIN_DELAY_S = 0.3
/** A player further behind than its delay plus this plays faster until it is back (live, not a recording). */
const CATCH_UP_S = 0.7
/** Boxes older than this are not drawn (the task saw nothing since); streams without timestamps only. */
const BOX_TTL_MS = 1500
/** Results kept to match the picture. */
const HISTORY_S = 10
/** What the stream adds to the player's own buffer, for streams without timestamps (file cameras). */
const PATH_DELAY_MS = 300
/** A tile the device refused retries after this (LiveViewerLimit says 10 s). */
const RETRY_MS = 10_000

/**
 * The live wall (spec 4.10 Live stream; docs/console-and-cli.md "Live wall"): every camera with
 * a video stream in a grid of tiles, each resizable and full screen, with its stream task's
 * boxes drawn from the result of the very frame shown. Each tile keeps its session alive while
 * it is shown and stops it when it goes.
 */
export function Live({ client }: { client: DeviceClient }) {
  const [cameras, setCameras] = useState<Camera[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [overlay, setOverlay] = useState(true)
  useEffect(() => {
    client.call('/gtw/cwai/Camera/page', { pageNum: 1, pageSize: 500 }).then((page) => setCameras(page.rows), setError)
  }, [])
  const playable = (cameras ?? []).filter((c) => PLAYABLE.includes(c.sourceType))
  return html`<main class="live" id="main">
    <h1 tabindex="-1">Live wall</h1>
    <${ErrorPanel} error=${error} />
    <p><label class="check"><input type="checkbox" checked=${overlay} onChange=${(e: Event) => setOverlay((e.target as HTMLInputElement).checked)} data-testid="overlay-toggle" /> Show the boxes of the cameras' tasks</label></p>
    ${cameras === null && !error ? html`<p class="hint">Loading…</p>`
      : playable.length === 0 ? html`<p class="hint">No camera with a video stream (RTSP or file) to show.</p>`
      : html`<div class="tiles wall" data-testid="live-wall">${playable.map((c) => html`<${LiveTile} key=${c.cameraId} client=${client} camera=${c} overlay=${overlay} />`)}</div>`}
  </main>`
}

function LiveTile({ client, camera, overlay }: { client: DeviceClient; camera: Camera; overlay: boolean }) {
  const tile = useRef<HTMLElement>(null)
  const video = useRef<FrameVideo>(null)
  const canvas = useRef<HTMLCanvasElement>(null)
  const [session, setSession] = useState<LiveSession | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [size, setSize] = useState(DEFAULT_SIZE)
  const [fullscreen, setFullscreen] = useState(false)
  const results = useRef<OverlayResult[]>([])
  /** How far behind the newest received frame results arrive (s): the player keeps at least this delay. */
  const resultLag = useRef<number[]>([])

  // The session: requested on show, kept alive, stopped on leave; a new one when it was lost.
  useEffect(() => {
    let current: LiveSession | null = null
    let stopped = false
    let keepAlive: ReturnType<typeof setInterval> | null = null
    const open = async () => {
      try {
        current = await client.call('/gtw/cwai/LiveStream/request', { cameraId: camera.cameraId, overlay: true })
        if (stopped) return void stop()
        setError(null)
        setSession(current)
        keepAlive = setInterval(() => {
          client.call('/gtw/cwai/LiveStream/keepAlive', { sessionId: current!.sessionId }).catch((e: unknown) => {
            if (e instanceof DeviceError && e.item?.messageKey === 'api.error.LiveSessionNotFound') {
              clearInterval(keepAlive!)
              void open()
            }
          })
        }, Math.max(1000, current.idleTimeoutMs / 3))
      } catch (e) {
        setError(e)
        if (!stopped) setTimeout(() => { if (!stopped) void open() }, RETRY_MS)
      }
    }
    const stop = () => {
      if (current) client.call('/gtw/cwai/LiveStream/stop', { sessionId: current.sessionId }).catch(() => undefined)
      current = null
    }
    void open()
    return () => {
      stopped = true
      if (keepAlive) clearInterval(keepAlive)
      stop()
    }
  }, [camera.cameraId])

  // Live edge: the player keeps behind the newest frame it has by the time results take to
  // arrive (so each frame's boxes are there when it is shown), and catches up when further
  // behind; a stream that ended (the camera reconnected) is read again.
  useEffect(() => {
    const v = video.current
    if (!v || !session) return
    // Muted autoplay is allowed; started here since the muted attribute is set after the element exists.
    v.muted = true
    void v.play().catch(() => undefined)
    const timer = setInterval(() => {
      if (v.paused) void v.play().catch(() => undefined)
      if (v.buffered.length === 0) return
      const behind = v.buffered.end(v.buffered.length - 1) - v.currentTime
      const lags = [...resultLag.current].sort((a, b) => a - b)
      const delay = Math.max(MIN_DELAY_S, (lags[Math.floor(lags.length * 0.9)] ?? 0) + 0.1)
      // A rate, not a seek: a seek would make the browser ask for the stream again.
      v.playbackRate = behind > delay + CATCH_UP_S ? 1.5 : behind < delay ? 0.8 : behind < delay + CATCH_UP_S / 2 ? 1 : v.playbackRate
      v.dataset.delay = delay.toFixed(2)
    }, 500)
    const reload = () => setTimeout(() => { v.src = session.url; void v.play().catch(() => undefined) }, 1000)
    v.addEventListener('ended', reload)
    v.addEventListener('error', reload)
    return () => { clearInterval(timer); v.removeEventListener('ended', reload); v.removeEventListener('error', reload) }
  }, [session])

  // The overlay: the task's results from the session's event stream; each presented frame is
  // drawn with its own result (requestVideoFrameCallback's mediaTime against the result's).
  useEffect(() => {
    if (!overlay || !session?.overlayUrl) return
    const source = new EventSource(session.overlayUrl)
    source.onmessage = (message) => {
      const result = JSON.parse(String(message.data)) as OverlayResult
      const v = video.current
      if (result.mediaTime !== null && v && v.buffered.length > 0) {
        resultLag.current = [...resultLag.current.slice(-49), v.buffered.end(v.buffered.length - 1) - result.mediaTime]
      }
      results.current = [...results.current.filter((r) => result.time - r.time < HISTORY_S * 1000), result]
      if (canvas.current) canvas.current.dataset.newestResult = String(result.mediaTime)
    }
    const v = video.current
    const shownTimes: number[] = []
    let frameHandle = 0
    let animation = 0
    const onFrame = (_now: number, meta: FrameMetadata) => {
      shownTimes.push(meta.mediaTime)
      if (shownTimes.length > 30) shownTimes.shift()
      const interval = medianGap(shownTimes) ?? 0.1
      const { result, match } = resultForFrame(results.current, meta.mediaTime, interval)
      const shown = result && match === 'held' ? movedTo(result, meta.mediaTime) : result
      if (results.current.at(-1)?.mediaTime !== null) paint(canvas.current, video.current, shown, match, meta.mediaTime)
      // What the clock estimate (the fallback) would draw on this frame, for comparison (docs/recording-and-live-view.md "Boxes on the frame shown").
      if (canvas.current) canvas.current.dataset.estimated = JSON.stringify(estimatedResult(video.current, results.current)?.objects.map((o) => o.box) ?? [])
      frameHandle = v!.requestVideoFrameCallback!(onFrame)
    }
    if (v?.requestVideoFrameCallback) frameHandle = v.requestVideoFrameCallback(onFrame)
    // Without requestVideoFrameCallback, or a stream without timestamps: the frame shown is estimated from the clock.
    animation = requestAnimationFrame(function estimate() {
      const newest = results.current.at(-1)
      if (!v?.requestVideoFrameCallback || (newest && newest.mediaTime === null)) paint(canvas.current, video.current, estimatedResult(video.current, results.current), 'held', null)
      animation = requestAnimationFrame(estimate)
    })
    return () => {
      source.close()
      if (frameHandle) v?.cancelVideoFrameCallback?.(frameHandle)
      cancelAnimationFrame(animation)
      results.current = []
      paint(canvas.current, video.current, null, 'none', null)
    }
  }, [overlay, session])

  useEffect(() => {
    const onChange = () => setFullscreen(document.fullscreenElement === tile.current)
    document.addEventListener('fullscreenchange', onChange)
    return () => document.removeEventListener('fullscreenchange', onChange)
  }, [])
  const toggleFullscreen = () => {
    if (document.fullscreenElement === tile.current) void document.exitFullscreen()
    else void tile.current?.requestFullscreen().catch((e: unknown) => setError(e))
  }

  const limited = error instanceof DeviceError && error.messageKey === 'api.error.LiveViewerLimit'
  const limit = limited ? (error.item?.details as { limit?: number; scope?: string } | undefined) : undefined
  return html`<section ref=${tile} class=${`panel tile${fullscreen ? ' fullscreen' : ''}`} style=${{ width: `min(100%, ${TILE_WIDTHS[size]}px)` }}
    aria-labelledby=${`tile-${camera.cameraId}`} data-testid="live-tile" data-camera=${camera.cameraId} data-size=${size}>
    <div class="tile-head">
      <h2 id=${`tile-${camera.cameraId}`}>${camera.cameraName} <span class="badge">${camera.status}</span></h2>
      <div class="actions">
        <button type="button" class="secondary" disabled=${size === 0} onClick=${() => setSize(size - 1)} aria-label=${`Smaller tile for ${camera.cameraName}`}>−</button>
        <button type="button" class="secondary" disabled=${size === TILE_WIDTHS.length - 1} onClick=${() => setSize(size + 1)} aria-label=${`Larger tile for ${camera.cameraName}`}>+</button>
        <button type="button" class="secondary" onClick=${toggleFullscreen} aria-pressed=${fullscreen}
          aria-label=${`${fullscreen ? 'Leave full screen' : 'Full screen'}: ${camera.cameraName}`}>${fullscreen ? 'Exit full screen' : 'Full screen'}</button>
      </div>
    </div>
    ${limited ? html`<p class="notice" role="alert" data-testid="tile-limit">${limitText(camera.cameraName, limit)}</p>`
      : html`<${ErrorPanel} error=${error} context=${`Live view of ${camera.cameraName}`} />`}
    <div class="player">
      ${session ? html`<video ref=${video} src=${session.url} muted autoplay playsinline aria-label=${`Live view of ${camera.cameraName}`} data-testid="live-video"></video>` : html`<p class="hint">${limited ? 'Not shown.' : 'Connecting…'}</p>`}
      <canvas ref=${canvas} class="overlay" hidden=${!overlay} aria-hidden="true" data-testid="live-overlay"></canvas>
    </div>
  </section>`
}

/** Why a tile is not shown: the viewer bound the device refused it for (LiveViewerLimit's details) and what to do. */
function limitText(cameraName: string, limit: { limit?: number; scope?: string } | undefined): string {
  const n = limit?.limit
  const viewers = n === undefined ? 'as many live viewers as allowed' : `${n} live viewer${n === 1 ? '' : 's'}`
  const bound = limit?.scope === 'device'
    ? `The device already has ${viewers} across its cameras (LIVE_MAX_SESSIONS), so ${cameraName} is not shown. Close another live view`
    : `${cameraName} already has ${viewers}, the most the device allows per camera (LIVE_MAX_VIEWERS_PER_CAMERA). Close another view of it (another tab or user)`
  return `${bound}; this tile tries again every ${RETRY_MS / 1000} s.`
}

/**
 * For a stream without timestamps: the result of the frame the video shows now, estimated — the
 * picture is behind the newest frame by the player's buffer and the stream's path.
 */
function estimatedResult(video: HTMLVideoElement | null, results: OverlayResult[]): OverlayResult | null {
  if (!video || video.buffered.length === 0) return null
  const behindMs = (video.buffered.end(video.buffered.length - 1) - video.currentTime) * 1000 + PATH_DELAY_MS
  const shownAt = Date.now() - behindMs
  const result = [...results].reverse().find((r) => r.time <= shownAt) ?? null
  return result && shownAt - result.time <= BOX_TTL_MS ? result : null
}

/** The picture's rectangle inside the video element (object-fit: contain letterboxes it). */
function pictureRect(video: HTMLVideoElement): { x: number; y: number; width: number; height: number } {
  const { clientWidth: w, clientHeight: h, videoWidth: vw, videoHeight: vh } = video
  if (!vw || !vh) return { x: 0, y: 0, width: w, height: h }
  const scale = Math.min(w / vw, h / vh)
  return { x: (w - vw * scale) / 2, y: (h - vh * scale) / 2, width: vw * scale, height: vh * scale }
}

/**
 * Draws the boxes (pixels of the camera's picture) scaled onto the picture as shown; the label
 * goes under the box, never over the object's top (a person's head). The canvas tells what it
 * drew (data-boxes, data-match, data-media-time, data-drawn in picture pixels) for tests and tools.
 */
function paint(canvas: HTMLCanvasElement | null, video: HTMLVideoElement | null, result: OverlayResult | null, match: Match, mediaTime: number | null) {
  if (!canvas || !video) return
  const width = video.clientWidth
  const height = video.clientHeight
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width
    canvas.height = height
  }
  const context = canvas.getContext('2d')!
  context.clearRect(0, 0, width, height)
  canvas.dataset.boxes = String(result?.objects.length ?? 0)
  canvas.dataset.match = result ? match : 'none'
  canvas.dataset.mediaTime = mediaTime === null ? '' : String(mediaTime)
  canvas.dataset.drawn = JSON.stringify(result?.objects.map((o) => o.box) ?? [])
  if (!result) return
  const picture = pictureRect(video)
  const sx = picture.width / result.width
  const sy = picture.height / result.height
  context.lineWidth = 2
  context.font = '12px sans-serif'
  for (const object of result.objects) {
    const box = { x: picture.x + object.box.x * sx, y: picture.y + object.box.y * sy, width: object.box.width * sx, height: object.box.height * sy }
    context.strokeStyle = '#00e060'
    context.strokeRect(box.x, box.y, box.width, box.height)
    const text = `${object.label} ${Math.round(object.confidence * 100)}%`
    const at = labelPlace(box, 12, picture.y + picture.height)
    context.fillStyle = 'rgba(0, 0, 0, .6)'
    context.fillRect(at.x, at.y - 11, context.measureText(text).width + 4, 14)
    context.fillStyle = '#00e060'
    context.fillText(text, at.x + 2, at.y)
  }
}
