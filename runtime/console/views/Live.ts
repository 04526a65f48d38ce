import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { DeviceError } from '../../client/errors.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'

interface Camera { cameraId: string; cameraName: string; sourceType: string; status: string }
interface LiveSession { sessionId: string; url: string; overlayUrl: string | null; idleTimeoutMs: number }
interface OverlayResult { time: number; width: number; height: number; objects: { box: { x: number; y: number; width: number; height: number }; label: string; confidence: number }[] }

/** Cameras with a stream the device copies (docs/recording-and-live-view.md "Live view"). */
const PLAYABLE = ['rtsp', 'file']
/** A player further behind the newest buffered frame than this catches up (live, not a recording). */
const MAX_BEHIND_SECONDS = 1
/** Boxes older than this are not drawn (the task saw nothing since). */
const BOX_TTL_MS = 1500
/** Results kept to match the picture, which is behind the detector by the player's buffer. */
const HISTORY_MS = 10_000
/** What the stream adds to the player's own buffer: camera to device to browser (docs/recording-and-live-view.md "Live view"). */
const PATH_DELAY_MS = 300

/**
 * The live page (spec 4.10 Live stream): a tile per camera playing its live view, with the
 * boxes of its stream task on or off. Each tile keeps its session alive while it is shown and
 * stops it when it goes.
 */
export function Live({ client }: { client: DeviceClient }) {
  const [cameras, setCameras] = useState<Camera[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [overlay, setOverlay] = useState(true)
  useEffect(() => {
    client.call<{ rows: Camera[] }>('/gtw/cwai/Camera/page', { pageNum: 1, pageSize: 50 }).then((page) => setCameras(page.rows), setError)
  }, [])
  const playable = (cameras ?? []).filter((c) => PLAYABLE.includes(c.sourceType))
  return html`<main class="live" id="main">
    <h1 tabindex="-1">Live</h1>
    <${ErrorPanel} error=${error} />
    <p><label class="check"><input type="checkbox" checked=${overlay} onChange=${(e: Event) => setOverlay((e.target as HTMLInputElement).checked)} data-testid="overlay-toggle" /> Show the boxes of the cameras' tasks</label></p>
    ${cameras === null && !error ? html`<p class="hint">Loading…</p>`
      : playable.length === 0 ? html`<p class="hint">No camera with a video stream (RTSP or file) to show.</p>`
      : html`<div class="tiles">${playable.map((c) => html`<${LiveTile} key=${c.cameraId} client=${client} camera=${c} overlay=${overlay} />`)}</div>`}
  </main>`
}

function LiveTile({ client, camera, overlay }: { client: DeviceClient; camera: Camera; overlay: boolean }) {
  const video = useRef<HTMLVideoElement>(null)
  const canvas = useRef<HTMLCanvasElement>(null)
  const [session, setSession] = useState<LiveSession | null>(null)
  const [error, setError] = useState<unknown>(null)
  const results = useRef<OverlayResult[]>([])

  // The session: requested on show, kept alive, stopped on leave; a new one when it was lost.
  useEffect(() => {
    let current: LiveSession | null = null
    let stopped = false
    let keepAlive: ReturnType<typeof setInterval> | null = null
    const open = async () => {
      try {
        current = await client.call<LiveSession>('/gtw/cwai/LiveStream/request', { cameraId: camera.cameraId, overlay: true })
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
        if (!stopped) setTimeout(() => { if (!stopped) void open() }, 5000)
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

  // Live edge: a player that fell behind plays faster until it is at the newest frames; a stream
  // that ended (the camera reconnected) is read again.
  useEffect(() => {
    const v = video.current
    if (!v || !session) return
    // Muted autoplay is allowed; started here since the muted attribute is set after the element exists.
    v.muted = true
    void v.play().catch(() => undefined)
    const timer = setInterval(() => {
      if (v.paused) void v.play().catch(() => undefined)
      if (v.buffered.length === 0) return
      // Faster until caught up: a seek would make the browser ask for the stream again.
      const behind = v.buffered.end(v.buffered.length - 1) - v.currentTime
      v.playbackRate = behind > MAX_BEHIND_SECONDS ? 1.5 : behind < MAX_BEHIND_SECONDS / 2 ? 1 : v.playbackRate
    }, 1000)
    const reload = () => setTimeout(() => { v.src = session.url; void v.play().catch(() => undefined) }, 1000)
    v.addEventListener('ended', reload)
    v.addEventListener('error', reload)
    return () => { clearInterval(timer); v.removeEventListener('ended', reload); v.removeEventListener('error', reload) }
  }, [session])

  // The overlay: the task's boxes from the session's event stream, drawn over the picture.
  useEffect(() => {
    if (!overlay || !session?.overlayUrl) return
    const source = new EventSource(session.overlayUrl)
    source.onmessage = (message) => {
      const result = JSON.parse(String(message.data)) as OverlayResult
      results.current = [...results.current.filter((r) => result.time - r.time < HISTORY_MS), result]
    }
    let frame = requestAnimationFrame(function draw() {
      paint(canvas.current, video.current, shownResult(video.current, results.current))
      frame = requestAnimationFrame(draw)
    })
    return () => {
      source.close()
      cancelAnimationFrame(frame)
      results.current = []
      paint(canvas.current, video.current, null)
    }
  }, [overlay, session])

  return html`<section class="panel tile" aria-labelledby=${`tile-${camera.cameraId}`} data-testid="live-tile" data-camera=${camera.cameraId}>
    <h2 id=${`tile-${camera.cameraId}`}>${camera.cameraName} <span class="badge">${camera.status}</span></h2>
    <${ErrorPanel} error=${error} />
    <div class="player">
      ${session ? html`<video ref=${video} src=${session.url} muted autoplay playsinline aria-label=${`Live view of ${camera.cameraName}`} data-testid="live-video"></video>` : html`<p class="hint">Connecting…</p>`}
      <canvas ref=${canvas} class="overlay" hidden=${!overlay} aria-hidden="true" data-testid="live-overlay"></canvas>
    </div>
  </section>`
}

/**
 * The result of the frame the video shows now: the picture is behind the newest frame by the
 * player's buffer and the stream's path, so the newest result at least that old.
 */
function shownResult(video: HTMLVideoElement | null, results: OverlayResult[]): OverlayResult | null {
  if (!video || video.buffered.length === 0) return null
  const behindMs = (video.buffered.end(video.buffered.length - 1) - video.currentTime) * 1000 + PATH_DELAY_MS
  const shownAt = Date.now() - behindMs
  const result = [...results].reverse().find((r) => r.time <= shownAt) ?? null
  return result && shownAt - result.time <= BOX_TTL_MS ? result : null
}

/** Draws the boxes (pixels of the analysed frame) scaled onto the video as shown. */
function paint(canvas: HTMLCanvasElement | null, video: HTMLVideoElement | null, result: OverlayResult | null) {
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
  if (!result) return
  const sx = width / result.width
  const sy = height / result.height
  context.lineWidth = 2
  context.strokeStyle = '#00e060'
  context.fillStyle = '#00e060'
  context.font = '12px sans-serif'
  for (const object of result.objects) {
    context.strokeRect(object.box.x * sx, object.box.y * sy, object.box.width * sx, object.box.height * sy)
    context.fillText(`${object.label} ${Math.round(object.confidence * 100)}%`, object.box.x * sx + 2, Math.max(12, object.box.y * sy - 3))
  }
}
