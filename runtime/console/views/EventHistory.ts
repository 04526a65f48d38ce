import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { DeviceEvent } from '../../client/types.ts'
import type { EventKind } from '../../../shared/events/kinds.ts'
import { ClipPlayer } from '../components/ClipPlayer.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { usePicture } from '../picture.ts'
import { saveFile } from '../save-file.ts'
import { useNames, type Names } from '../names.ts'

const PAGE_SIZE = 50
/** The kinds of the stream tasks (docs/events.md "Events"), alarms first. */
const KINDS = [['alarm.raised', 'Alarms'], ['object.entered', 'Objects entered'], ['object.left', 'Objects left'], ['passengerFlow.counted', 'Passenger flow']] as const
type Row = DeviceEvent & { thumbnailUrl: string | null; clipUrl: string | null }
interface Filter { cameraId: string; taskId: string; kind: string; label: string; from: string; to: string }

/** `datetime-local` value (browser time) → ISO 8601. */
const iso = (local: string) => (local ? new Date(local).toISOString() : undefined)
const describe = (e: Row) => {
  const p = e.payload
  return e.kind === 'alarm.raised' ? String(p.message ?? p.alarmType) : e.kind === 'object.entered' ? `${p.label} entered`
    : e.kind === 'object.left' ? `${p.label} left after ${(Number(p.dwellMs) / 1000).toFixed(1)} s` : `${p.in} in, ${p.out} out`
}

/**
 * The event history (spec 4.10 Event, docs/events.md "Event endpoints"): the stream tasks' events on a
 * timeline, newest first and grouped by day, with their snapshots and, where one was recorded,
 * their clip played in the page; filtered by camera, task, kind, label and time; the alarms
 * exported with their pictures.
 */
export function EventHistory({ client }: { client: DeviceClient }) {
  const [filter, setFilter] = useState<Filter>({ cameraId: '', taskId: '', kind: 'alarm.raised', label: '', from: '', to: '' })
  const [rows, setRows] = useState<Row[] | null>(null)
  const [total, setTotal] = useState(0)
  const [error, setError] = useState<Failure | null>(null)
  const names = useNames(client)
  const { cameras, tasks } = names
  const query = () => ({
    // The select offers only KINDS.
    kinds: filter.kind ? [filter.kind as EventKind] : KINDS.map(([k]) => k), ...(filter.cameraId ? { cameraId: filter.cameraId } : {}), ...(filter.taskId ? { taskId: filter.taskId } : {}),
    ...(filter.label.trim() ? { label: filter.label.trim() } : {}), ...(filter.from ? { startTime: iso(filter.from) } : {}), ...(filter.to ? { endTime: iso(filter.to) } : {}),
  })
  const load = async (pageNum: number) => {
    setError(null)
    try {
      const page = await client.call('/gtw/cwai/Event/EventPage', { ...query(), pageNum, pageSize: PAGE_SIZE })
      setTotal(page.total)
      setRows((shown) => (pageNum === 1 ? page.rows : [...(shown ?? []), ...page.rows]))
    } catch (e) {
      setError({ error: e, context: 'Events' })
    }
  }
  useEffect(() => { load(1) }, [])
  const set = (key: keyof Filter) => (e: Event) => setFilter((f) => ({ ...f, [key]: (e.target as HTMLInputElement).value }))
  const exportAlarms = async () => {
    setError(null)
    try {
      const { kinds: _kinds, ...rest } = query()
      saveFile(await client.download('/gtw/cwai/Event/ExportAlarms', { ...rest, kinds: ['alarm.raised'] }, { timeoutMs: 120_000 }))
    } catch (e) {
      setError({ error: e, context: 'Export alarms' })
    }
  }
  const days = new Map<string, Row[]>()
  for (const row of rows ?? []) {
    const day = new Date(row.time).toLocaleDateString()
    days.set(day, [...(days.get(day) ?? []), row])
  }

  return html`<main class="event-history" id="main">
    <h1 tabindex="-1">Events</h1>
    <div class="stack">
      <form class="panel stack" aria-labelledby="event-filter-heading" onSubmit=${(e: Event) => { e.preventDefault(); load(1) }} data-testid="event-filter">
        <h2 id="event-filter-heading">Find events</h2>
        <div class="row filters">
          <label>Camera<select value=${filter.cameraId} onChange=${set('cameraId')} data-testid="filter-camera"><option value="">Any</option>
            ${cameras.map((c) => html`<option value=${c.cameraId}>${c.cameraName}</option>`)}</select></label>
          <label>Task<select value=${filter.taskId} onChange=${set('taskId')} data-testid="filter-task"><option value="">Any</option>
            ${tasks.map((t) => html`<option value=${t.taskId}>${t.taskName ?? t.taskId}</option>`)}</select></label>
          <label>Kind<select value=${filter.kind} onChange=${set('kind')} data-testid="filter-kind"><option value="">Any</option>
            ${KINDS.map(([k, label]) => html`<option value=${k}>${label}</option>`)}</select></label>
          <label>Label<input value=${filter.label} maxLength=${64} placeholder="e.g. person" onInput=${set('label')} data-testid="filter-label" /></label>
          <label>From<input type="datetime-local" value=${filter.from} onInput=${set('from')} /></label>
          <label>To<input type="datetime-local" value=${filter.to} onInput=${set('to')} /></label>
        </div>
        <div class="row">
          <button type="submit" data-testid="filter-apply">Show</button>
          <button type="button" class="secondary" onClick=${exportAlarms}>Export alarms with pictures</button>
        </div>
      </form>
      <section class="panel stack" aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Timeline ${rows ? html`<span class="badge" data-testid="event-total">${total}</span>` : null}</h2>
        <${ErrorPanel} ...${error} />
        ${rows?.length === 0 ? html`<p data-testid="no-events">No events match.</p>` : null}
        ${[...days].map(([day, list]) => html`<section aria-label=${day}><h3>${day}</h3>
          <ol class="event-list timeline" data-testid="timeline">${list.map((row) => html`<${EventRow} key=${row.id} client=${client} row=${row} names=${names} />`)}</ol>
        </section>`)}
        ${rows && rows.length < total ? html`<div class="row"><button type="button" class="secondary" onClick=${() => load(Math.floor(rows.length / PAGE_SIZE) + 1)}>Older events</button></div>` : null}
      </section>
    </div>
  </main>`
}

function EventRow({ client, row, names }: { client: DeviceClient; row: Row; names: Names }) {
  const thumbnail = usePicture(client, row.thumbnailUrl)
  const p = row.payload
  return html`<li class="task-event" data-kind=${row.kind} data-event-id=${row.id}>
    ${thumbnail.url ? html`<img src=${thumbnail.url} alt=${`Snapshot: ${describe(row)}`} class="thumb" data-testid="event-thumbnail" />` : null}
    <div class="stack">
      <div><time>${new Date(row.time).toLocaleTimeString()}</time> <code>${row.kind}</code> <span data-testid="event-text">${describe(row)}</span></div>
      <div class="hint" data-testid="event-where">${[p.cameraId ? `camera ${names.camera(p.cameraId)}` : '', p.taskId ? `task ${names.task(p.taskId)}` : ''].filter(Boolean).join(' · ')}</div>
      ${row.clipUrl ? html`<${ClipPlayer} key=${row.clipUrl} client=${client} clipUrl=${row.clipUrl} label=${describe(row)} />` : null}
    </div>
  </li>`
}
