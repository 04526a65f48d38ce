import type { EventKind } from '../../../shared/events/kinds.ts'
import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { DeviceEvent, StreamTaskStatus } from '../../client/types.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { formatCount } from '../messages.ts'
import { LIVE_TEXT, useLiveEvents } from '../live-events.ts'
import { usePicture } from '../picture.ts'
import { TaskZones } from './TaskZones.ts'

const REFRESH_MS = 2000
const MAX_EVENTS = 30
/** What analysis tasks produce (docs/events.md "Events", source `analysis`). */
const TASK_KINDS: EventKind[] = ['object.entered', 'object.left', 'object.recognized', 'alarm.raised', 'passengerFlow.counted']

const rate = (v: number) => `${v.toFixed(1)} fps`
const ms = (v: number | null) => (v === null ? '-' : `${formatCount(Math.round(v))} ms`)
const percent = (v: number) => `${(v * 100).toFixed(1)} %`
const seconds = (msValue: unknown) => `${(Number(msValue) / 1000).toFixed(1)} s`
/** A task's state in words (`disabled`: switched off, `idle`: outside its schedule, docs/cameras-and-stream-tasks.md "Stream tasks"). */
export const stateText = (s: StreamTaskStatus) => (s.state === 'running' ? 'Running' : s.state === 'waiting' ? 'Waiting' : s.state === 'idle' ? 'Outside its schedule' : 'Stopped')

/** The run details in words (docs/cameras-and-stream-tasks.md "Stream tasks" QueryTaskStatus). */
const FIGURES: [string, string, (s: StreamTaskStatus) => string][] = [
  ['Input', 'inputFps', (s) => rate(s.inputFps)],
  ['Processed (last 10 s)', 'processedFps', (s) => `${rate(s.processedFps)} of ${rate(s.targetFps)} wanted`],
  ['Frames in', 'framesIn', (s) => formatCount(s.framesIn)],
  ['Discarded', 'discard', (s) => `${formatCount(s.framesDropped)} (${percent(s.discardRate)})`],
  ['Skipped by motion gating', 'motionSkipped', (s) => (s.motionGating ? formatCount(s.motionSkipped) : 'motion gating off')],
  ['… of them while tracking', 'trackedSkipped', (s) => (s.motionGating ? formatCount(s.trackedSkipped) : 'motion gating off')],
  ['Detected as crops around the motion', 'regionFrames', (s) => (s.motionGating && s.regionDetection ? formatCount(s.regionFrames) : 'region detection off')],
  ['Skipped outside the schedule', 'scheduleSkipped', (s) => (s.scheduleId ? formatCount(s.scheduleSkipped) : 'no schedule')],
  ['Detector latency p50 / p99', 'detectorLatency', (s) => `${ms(s.detectorLatencyP50Ms)} / ${ms(s.detectorLatencyP99Ms)}`],
  ['Frame to result p99', 'criticalPathLatencyP99Ms', (s) => ms(s.criticalPathLatencyP99Ms)],
  ['Frame to event written p99', 'eventWriteP99Ms', (s) => ms(s.eventWriteP99Ms)],
  ['Tracked objects now', 'trackedObjects', (s) => formatCount(s.trackedObjects)],
  ['Objects entered', 'objectsEntered', (s) => formatCount(s.objectsEntered)],
]

/**
 * One stream task's run details, read again every 2 s, and its events as they arrive over the
 * WebSocket listener (the stored ones first, from Event/EventPage).
 */
export function StreamTaskDetail({ client, taskId, taskName = null, cameraName, onClose }: { client: DeviceClient; taskId: string; taskName?: string | null; cameraName: string; onClose: () => void }) {
  const [status, setStatus] = useState<StreamTaskStatus | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [events, setEvents] = useState<DeviceEvent[]>([])
  const heading = useRef<HTMLHeadingElement>(null)

  useEffect(() => {
    heading.current?.focus()
    const load = () => client.polling.streamTaskDetail(taskId).then((s) => { setStatus(s); setError(null) }, setError)
    load()
    const timer = setInterval(load, REFRESH_MS)
    return () => clearInterval(timer)
  }, [])

  /** Newest first, each event once (the stored page and the live stream overlap). */
  const add = (list: DeviceEvent[]) => setEvents((shown) => {
    const ids = new Set(shown.map((e) => e.id))
    const fresh = list.filter((e) => e.payload.taskId === taskId && !ids.has(e.id))
    return fresh.length ? [...fresh, ...shown].sort((a, b) => b.id - a.id).slice(0, MAX_EVENTS) : shown
  })
  // Once the listener is ready, the stored events up to now: nothing falls between the two.
  const live = useLiveEvents(client, {
    kinds: TASK_KINDS,
    onEvent: (event) => add([event]),
    onReady: () => client.eventPage({ kinds: TASK_KINDS, pageSize: 200 }).then((page) => add(page.rows), setError),
  })

  return html`<section class="panel stack" aria-labelledby="stream-detail-heading" data-testid="stream-detail">
    <h2 id="stream-detail-heading" tabindex="-1" ref=${heading}>Task ${taskName ? html`${taskName} (<code class="wrap">${taskId}</code>)` : html`<code class="wrap">${taskId}</code>`} on ${cameraName}</h2>
    <${ErrorPanel} error=${error} context="Run details" />
    ${status ? html`<dl class="fields" data-testid="stream-figures">
      <dt>State</dt><dd data-field="state">${stateText(status)}${status.stateReason ? html` <span class="hint">(${status.stateReason})</span>` : null}</dd>
      ${FIGURES.map(([label, key, show]) => html`<dt>${label}</dt><dd data-field=${key}>${show(status)}</dd>`)}
      ${status.lastError ? html`<dt>Last error</dt><dd data-field="lastError">${status.lastError.msgText} <code>${status.lastError.messageKey}</code></dd>` : null}
    </dl>` : html`<p class="hint">Loading…</p>`}
    ${status ? html`<${TaskZones} client=${client} task=${status} />` : null}
    <h3 id="stream-events-heading">Events <span class=${`badge ${live}`} data-testid="stream-events-state">${LIVE_TEXT[live]}</span></h3>
    ${events.length === 0 ? html`<p class="hint">No events of this task yet: they appear here as they happen.</p>`
      : html`<ol class="event-list task-events" aria-labelledby="stream-events-heading" aria-live="polite" data-testid="stream-events">
        ${events.map((e) => html`<${EventItem} key=${e.id} client=${client} event=${e} />`)}
      </ol>`}
    <div class="row"><button type="button" class="secondary" onClick=${onClose}>Close details</button></div>
  </section>`
}

/** One event of the task: an entered object with its snapshot, a left one with its dwell time. */
function EventItem({ client, event }: { client: DeviceClient; event: DeviceEvent }) {
  const p = event.payload
  const snapshot = usePicture(client, event.kind === 'object.entered' && typeof p.snapshotUrl === 'string' ? p.snapshotUrl : null)
  const what = event.kind === 'object.entered' ? `${p.label} entered (${percent(Number(p.confidence))} sure)`
    : event.kind === 'object.left' ? `${p.label} left after ${seconds(p.dwellMs)}`
    : event.kind === 'object.recognized' ? `${p.label} recognized as ${p.name} (similarity ${Number(p.similarity).toFixed(2)})`
    : event.kind === 'alarm.raised' ? `Alarm: ${p.message ?? p.alarmType}`
    : `Counted ${p.in} in, ${p.out} out at ${p.counterName ?? p.counterId}`
  return html`<li class="task-event" data-kind=${event.kind} data-object-id=${String(p.objectId ?? '')}>
    ${snapshot.url ? html`<img src=${snapshot.url} alt=${`Snapshot of ${p.label} ${p.objectId}`} class="thumb" data-testid="event-snapshot" />` : null}
    <div><time>${new Date(event.time).toLocaleTimeString()}</time> <code>${event.kind}</code>
      <div data-testid="event-text">${what}</div>
      ${p.objectId ? html`<div class="hint">object <code>${String(p.objectId)}</code></div>` : null}</div>
  </li>`
}
