import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { Names } from '../names.ts'
import { clipAt, dayRange, localDay, markerStart, offsetIn, percentOf, viewRange, type Rolls, type TimelineClip, type TimelineEvent } from '../timeline.ts'
import { ErrorPanel } from './ErrorPanel.ts'

export interface Clip extends TimelineClip { cameraId: string; durationMs: number; bytes: number; eventKind: string | null }

/** What the bar marks (docs/console-and-cli.md "Recordings"). */
const MARKED = ['object.entered', 'alarm.raised'] as const
const PAGE = 500
/** Keyboard steps of the bar: arrows, Page Up/Down. */
const STEP_MS = 10_000, BIG_STEP_MS = 10 * 60_000

const clock = (time: number) => new Date(time).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' })

/** Every page of a list (at most 20 pages: 10,000 clips or events of one camera and day). */
async function all<T>(read: (pageNum: number) => Promise<{ total: number; rows: T[] }>): Promise<T[]> {
  const rows: T[] = []
  for (let pageNum = 1; pageNum <= 20; pageNum++) {
    const page = await read(pageNum)
    rows.push(...page.rows)
    if (rows.length >= page.total || page.rows.length === 0) break
  }
  return rows
}

/**
 * A camera's day on a bar (docs/console-and-cli.md "Recordings"): its clips as segments
 * (RecordClipPage with from/to), its object.entered and alarm.raised events as markers
 * (EventPage); clicking or dragging on the bar, or its arrow keys and Enter, plays the clip
 * covering that time from there; a marker plays from its pre-roll before the event.
 */
export function RecordingTimeline({ client, names, rollsOf, policyRolls }: {
  client: DeviceClient
  names: Names
  /** The camera's rolls (its recording settings). */
  rollsOf(cameraId: string): Rolls
  /** The rolls of a policy's clip action, null when it has none. */
  policyRolls(policyId: string): Rolls | null
}) {
  const cameras = names.cameras.filter((c) => c.sourceType === 'rtsp' || c.sourceType === 'file')
  const [cameraId, setCameraId] = useState('')
  const [day, setDay] = useState(localDay(Date.now()))
  const [fit, setFit] = useState(true)
  const [data, setData] = useState<{ clips: Clip[]; events: TimelineEvent[] } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [cursor, setCursor] = useState<number | null>(null)
  const [playing, setPlaying] = useState<{ clip: Clip; url: string; offset: number; at: number } | null>(null)
  const video = useRef<HTMLVideoElement>(null)
  const bar = useRef<HTMLDivElement>(null)
  const dragging = useRef(false)
  const camera = cameraId || cameras[0]?.cameraId || ''
  const range = dayRange(day)

  const load = async () => {
    if (!camera || !range) return setData(null)
    try {
      const [clips, events] = await Promise.all([
        all((pageNum) => client.call<{ total: number; rows: Clip[] }>('/gtw/cwai/System/RecordClipPage', { pageNum, pageSize: PAGE, cameraId: camera, from: range.from, to: range.to })),
        all((pageNum) => client.call<{ total: number; rows: TimelineEvent[] }>('/gtw/cwai/Event/EventPage', {
          pageNum, pageSize: PAGE, cameraId: camera, kinds: MARKED, startTime: new Date(range.from).toISOString(), endTime: new Date(range.to).toISOString(),
        })),
      ])
      setData({ clips: clips.sort((a, b) => a.startTime - b.startTime), events: events.sort((a, b) => Date.parse(a.time) - Date.parse(b.time)) })
      setError(null)
    } catch (e) {
      setError(e)
    }
  }
  useEffect(() => { setPlaying(null); setCursor(null); void load() }, [camera, day])

  const shown = range && data ? viewRange(range, data.clips, data.events, fit) : range
  const play = async (time: number, eventId?: number) => {
    setCursor(time)
    const clip = data ? clipAt(data.clips, time, eventId) : null
    if (!clip) return setError(new Error(`No recording at ${clock(time)} or later on this day.`))
    try {
      const url = playing?.clip.clipId === clip.clipId ? playing.url : (await client.call<{ url: string }>('/gtw/cwai/File/ClipPlayUrl', { id: clip.clipId })).url
      const offset = offsetIn(clip, time)
      setPlaying({ clip, url, offset, at: time })
      setError(null)
      // The same clip already loaded: seek in it at once.
      if (playing?.clip.clipId === clip.clipId && video.current) video.current.currentTime = offset
    } catch (e) {
      setError(e)
    }
  }
  const timeAt = (clientX: number) => {
    const box = bar.current!.getBoundingClientRect()
    return shown!.from + Math.min(1, Math.max(0, (clientX - box.left) / box.width)) * (shown!.to - shown!.from)
  }
  const onKey = (e: KeyboardEvent) => {
    if (!shown) return
    const now = cursor ?? shown.from
    const step = { ArrowLeft: -STEP_MS, ArrowRight: STEP_MS, PageDown: -BIG_STEP_MS, PageUp: BIG_STEP_MS }[e.key]
    if (step !== undefined) setCursor(Math.min(shown.to, Math.max(shown.from, now + step)))
    else if (e.key === 'Home') setCursor(shown.from)
    else if (e.key === 'End') setCursor(shown.to)
    else if (e.key === 'Enter' || e.key === ' ') void play(now)
    else return
    e.preventDefault()
  }
  const cameraName = names.camera(camera)
  const eventText = (e: TimelineEvent) => {
    const what = e.kind === 'alarm.raised' ? `Alarm${e.payload.policyId ? ` ${names.policy(e.payload.policyId, typeof e.payload.policyName === 'string' ? e.payload.policyName : null)}` : ''}` : `${String(e.payload.label ?? 'object')} entered`
    return `${what}, ${clock(Date.parse(e.time))}${e.payload.taskId ? `, ${names.task(e.payload.taskId)}` : ''}`
  }

  return html`<section class="panel timeline" aria-labelledby="timeline">
    <h2 id="timeline">Timeline</h2>
    ${cameras.length === 0 ? html`<p class="hint">No camera with a stream to record (RTSP or file).</p>` : html`<div class="filters">
      <label>Camera<select value=${camera} onChange=${(e: Event) => setCameraId((e.target as HTMLSelectElement).value)} data-testid="timeline-camera">
        ${cameras.map((c) => html`<option value=${c.cameraId}>${c.cameraName}</option>`)}</select></label>
      <label>Day<input type="date" value=${day} onChange=${(e: Event) => setDay((e.target as HTMLInputElement).value)} data-testid="timeline-day" /></label>
      <label class="check"><input type="checkbox" checked=${!fit} onChange=${(e: Event) => setFit(!(e.target as HTMLInputElement).checked)} /> Whole day</label>
      <button type="button" class="link" onClick=${() => void load()}>Refresh timeline</button>
    </div>`}
    <${ErrorPanel} error=${error} context="Timeline" />
    ${shown && data ? html`
      <p class="hint" data-testid="timeline-summary">${cameraName}, ${new Date(range!.from).toLocaleDateString()}: ${data.clips.length} clip(s), ${data.events.length} event(s); ${clock(shown.from)}–${clock(shown.to)} shown. Click or drag on the bar to play from that time (or focus it and use ← → Page Up/Down, then Enter); a marker plays from its pre-roll before the event.</p>
      <div class="timeline-track">
        <div class="timeline-markers">${data.events.map((e) => html`<button type="button" class=${`timeline-marker ${e.kind === 'alarm.raised' ? 'alarm' : 'entered'}`}
          style=${`left: ${percentOf(shown, Date.parse(e.time))}%`} aria-label=${`Play: ${eventText(e)}`} title=${eventText(e)} data-testid="timeline-marker" data-event=${e.id} data-kind=${e.kind}
          onClick=${() => void play(markerStart(e, rollsOf(camera), policyRolls), e.id)}></button>`)}</div>
        <div class="timeline-bar" ref=${bar} role="slider" tabindex="0" aria-label=${`Recordings of ${cameraName}: time to play from`}
          aria-valuemin=${Math.round(shown.from / 1000)} aria-valuemax=${Math.round(shown.to / 1000)} aria-valuenow=${Math.round((cursor ?? shown.from) / 1000)}
          aria-valuetext=${clock(cursor ?? shown.from)} data-testid="timeline-bar" data-from=${shown.from} data-to=${shown.to} onKeyDown=${onKey}
          onPointerDown=${(e: PointerEvent) => { dragging.current = true; bar.current?.setPointerCapture?.(e.pointerId); setCursor(timeAt(e.clientX)) }}
          onPointerMove=${(e: PointerEvent) => { if (dragging.current) setCursor(timeAt(e.clientX)) }}
          onPointerUp=${(e: PointerEvent) => { if (!dragging.current) return; dragging.current = false; void play(timeAt(e.clientX)) }}>
          ${data.clips.map((c) => html`<div class=${`timeline-clip ${c.kind}`} data-testid="timeline-clip" data-clip=${c.clipId}
            style=${`left: ${percentOf(shown, c.startTime)}%; width: ${Math.max(0, percentOf(shown, c.endTime) - percentOf(shown, c.startTime))}%`}></div>`)}
          ${cursor !== null ? html`<div class="timeline-cursor" style=${`left: ${percentOf(shown, cursor)}%`}></div>` : null}
        </div>
        <div class="timeline-scale" aria-hidden="true"><span>${clock(shown.from)}</span><span>${clock(shown.to)}</span></div>
      </div>
      ${playing ? html`<div class="timeline-player">
        <p class="hint" data-testid="timeline-playing">${cameraName}: from ${clock(playing.at)} (clip ${clock(playing.clip.startTime)}–${clock(playing.clip.endTime)})</p>
        <video key=${playing.url} ref=${video} src=${playing.url} controls autoplay muted playsinline class="clip" data-testid="timeline-video"
          data-clip=${playing.clip.clipId} data-clip-start=${playing.clip.startTime} data-offset=${playing.offset}
          aria-label=${`Clip of ${cameraName} from ${clock(playing.at)}`}
          onLoadedMetadata=${(e: Event) => { (e.target as HTMLVideoElement).currentTime = playing.offset }}></video>
      </div>` : null}` : null}
  </section>`
}
