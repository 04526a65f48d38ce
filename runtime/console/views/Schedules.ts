import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { ScheduleClock, ScheduleView } from '../../../shared/schedules/types.ts'
import { type Day, type TimeWindow, type WeeklyWindow } from '../../../shared/schedules/windows.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'

const REFRESH_MS = 3000
const DAY_NAMES: Record<Day, string> = { sun: 'Sunday', mon: 'Monday', tue: 'Tuesday', wed: 'Wednesday', thu: 'Thursday', fri: 'Friday', sat: 'Saturday' }
/** Monday first, as operators read a week. */
const WEEK: Day[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
const TIME = '^(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?$|^24:00$'

type Row = { day: Day | 'every' | 'weekdays'; start: string; end: string }
type Exception = { date: string; hours: string }

/** The rows of the editor as the device stores them: "every day" and "weekdays" become a window per day. */
const windowsOf = (rows: Row[]): WeeklyWindow[] => rows.flatMap(({ day, start, end }) =>
  (day === 'every' ? WEEK : day === 'weekdays' ? WEEK.slice(0, 5) : [day]).map((d) => ({ day: d, start, end })))
/** `12:00-13:00, 15:00-16:00` ↔ windows; empty: off all day. */
const hoursOf = (text: string): TimeWindow[] => text.split(',').map((h) => h.trim()).filter(Boolean).map((h) => {
  const [start = '', end = ''] = h.split(/\s*[-–]\s*/)
  return { start, end }
})
const hoursText = (windows: TimeWindow[]) => windows.map((w) => `${w.start}-${w.end}`).join(', ')
const summary = (s: ScheduleView) => s.windows.length === 0 ? 'no weekly windows'
  : WEEK.map((d) => [d, s.windows.filter((w) => w.day === d)] as const).filter(([, ws]) => ws.length)
    .map(([d, ws]) => `${DAY_NAMES[d].slice(0, 3)} ${ws.map((w) => `${w.start}–${w.end}`).join(', ')}`).join('; ')

/**
 * Schedules (spec 4.10 Schedule, docs/alarms-and-schedules.md "Schedules"): weekly windows in the device's time zone
 * and date exceptions, whether each is on now and when it next changes (read again every few
 * seconds, so an edit is seen taking effect), and who uses it.
 */
export function Schedules({ client }: { client: DeviceClient }) {
  const [page, setPage] = useState<({ rows: ScheduleView[] } & ScheduleClock) | null>(null)
  const [failure, setFailure] = useState<Failure | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [editing, setEditing] = useState<ScheduleView | 'new' | null>(null)
  const load = () => client.polling.call('/gtw/cwai/schedule/page', { pageNum: 1, pageSize: 500 }).then(setPage, (e) => setFailure({ error: e, context: 'Schedules' }))
  useEffect(() => {
    load()
    const timer = setInterval(load, REFRESH_MS)
    return () => clearInterval(timer)
  }, [])
  const remove = async (s: ScheduleView) => {
    setFailure(null)
    try {
      await client.call('/gtw/cwai/schedule/delete', { scheduleId: s.scheduleId })
      setNotice(`Deleted the schedule ${s.scheduleName}.`)
      await load()
    } catch (e) {
      setFailure({ error: e, context: `Delete ${s.scheduleName}` })
    }
  }

  return html`<main class="schedules" id="main">
    <h1 tabindex="-1">Schedules</h1>
    <div class="stack">
      <section class="panel stack" aria-labelledby="schedule-list-heading">
        <h2 id="schedule-list-heading">Schedules</h2>
        ${page ? html`<p class="hint" data-testid="schedule-clock">Device time ${page.localTime} (${page.timeZone}): windows are read in this zone.</p>` : null}
        ${notice ? html`<p class="notice" role="status" data-testid="schedules-notice">${notice}</p>` : null}
        <${ErrorPanel} ...${failure} />
        ${page?.rows.length === 0 ? html`<p>No schedules yet.</p>` : null}
        ${page?.rows.length ? html`<div class="table-wrap"><table data-testid="schedules">
          <caption class="sr-only">Schedules, whether each is on now and who uses it</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Windows</th><th scope="col">Now</th><th scope="col">Used by</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>${page.rows.map((s) => html`<tr key=${s.scheduleId} data-schedule-id=${s.scheduleId}>
            <th scope="row">${s.scheduleName}</th>
            <td class="wrap">${summary(s)}${s.exceptions.length ? html`<div class="hint">${s.exceptions.length} date exception${s.exceptions.length > 1 ? 's' : ''}</div>` : null}</td>
            <td class="wrap"><span class=${`badge ${s.active ? 'open' : ''}`} data-testid="schedule-state">${s.active ? 'On' : 'Off'}</span>
              <div class="hint">${s.nextChangeLocal ? `until ${s.nextChangeLocal}` : 'no change ahead'}</div></td>
            <td class="wrap">${[...s.users.taskIds.map((t) => `task ${t}`), ...s.users.policies.map((p) => `policy ${p.policyName}`)].join(', ') || '-'}</td>
            <td><div class="actions">
              <button type="button" class="secondary" aria-label=${`Edit ${s.scheduleName}`} onClick=${() => { setNotice(null); setEditing(s) }}>Edit</button>
              <button type="button" class="danger-outline" aria-label=${`Delete ${s.scheduleName}`} onClick=${() => remove(s)}>Delete</button>
            </div></td>
          </tr>`)}</tbody>
        </table></div>` : null}
        ${editing ? null : html`<div class="row"><button type="button" onClick=${() => { setNotice(null); setEditing('new') }} data-testid="schedule-new">New schedule</button></div>`}
      </section>
      ${editing ? html`<${ScheduleForm} key=${editing === 'new' ? 'new' : editing.scheduleId} client=${client} schedule=${editing === 'new' ? null : editing}
        onSaved=${(message: string) => { setEditing(null); setNotice(message); load() }} onCancel=${() => setEditing(null)} />` : null}
    </div>
  </main>`
}

function ScheduleForm({ client, schedule, onSaved, onCancel }: { client: DeviceClient; schedule: ScheduleView | null; onSaved: (m: string) => void; onCancel: () => void }) {
  const [name, setName] = useState(schedule?.scheduleName ?? '')
  const [rows, setRows] = useState<Row[]>(schedule?.windows.map((w) => ({ ...w })) ?? [{ day: 'weekdays', start: '09:00', end: '17:00' }])
  const [exceptions, setExceptions] = useState<Exception[]>(schedule?.exceptions.map((e) => ({ date: e.date, hours: hoursText(e.windows) })) ?? [])
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const setRow = (i: number, change: Partial<Row>) => setRows((all) => all.map((r, j) => (j === i ? { ...r, ...change } : r)))
  const setException = (i: number, change: Partial<Exception>) => setExceptions((all) => all.map((r, j) => (j === i ? { ...r, ...change } : r)))
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    const body = { scheduleName: name.trim(), windows: windowsOf(rows), exceptions: exceptions.map((e) => ({ date: e.date, windows: hoursOf(e.hours) })) }
    try {
      if (schedule) await client.call('/gtw/cwai/schedule/update', { scheduleId: schedule.scheduleId, ...body })
      else await client.call('/gtw/cwai/schedule/add', body)
      onSaved(`${schedule ? 'Saved' : 'Added'} the schedule ${body.scheduleName}.`)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  const dayOptions = [['weekdays', 'Monday to Friday'], ['every', 'Every day'], ...WEEK.map((d) => [d, DAY_NAMES[d]])]
  return html`<form class="panel stack" onSubmit=${submit} aria-busy=${busy} aria-labelledby="schedule-form-heading" data-testid="schedule-form">
    <h2 id="schedule-form-heading">${schedule ? `Edit ${schedule.scheduleName}` : 'New schedule'}</h2>
    <label>Name<input name="scheduleName" value=${name} maxLength=${64} required onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} data-testid="schedule-name" /></label>
    <fieldset class="stack"><legend>Weekly windows</legend>
      <p class="hint">Local times HH:MM (or HH:MM:SS); an end at or before the start runs into the next day, 24:00 is midnight.</p>
      ${rows.length === 0 ? html`<p class="hint" data-testid="no-windows">No windows: the schedule is off except on the dates below.</p>` : null}
      ${rows.map((r, i) => html`<div class="row" data-testid="schedule-window">
        <label>Day<select value=${r.day} onChange=${(e: Event) => setRow(i, { day: (e.target as HTMLSelectElement).value as Row['day'] })} data-testid="window-day">
          ${dayOptions.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
        </select></label>
        <label>From<input value=${r.start} pattern=${TIME} required inputMode="numeric" onInput=${(e: Event) => setRow(i, { start: (e.target as HTMLInputElement).value })} data-testid="window-start" /></label>
        <label>To<input value=${r.end} pattern=${TIME} required inputMode="numeric" onInput=${(e: Event) => setRow(i, { end: (e.target as HTMLInputElement).value })} data-testid="window-end" /></label>
        <button type="button" class="secondary" aria-label=${`Remove window ${i + 1}`} onClick=${() => setRows((all) => all.filter((_, j) => j !== i))}>Remove</button>
      </div>`)}
      <div class="row"><button type="button" class="secondary" onClick=${() => setRows((all) => [...all, { day: 'mon', start: '09:00', end: '17:00' }])} data-testid="window-add">Add a window</button></div>
    </fieldset>
    <fieldset class="stack"><legend>Date exceptions</legend>
      <p class="hint">Hours replace that date's windows; leave them empty for a day off (a holiday).</p>
      ${exceptions.map((x, i) => html`<div class="row" data-testid="schedule-exception">
        <label>Date<input type="date" value=${x.date} required onInput=${(e: Event) => setException(i, { date: (e.target as HTMLInputElement).value })} /></label>
        <label>Hours<input value=${x.hours} placeholder="off all day" onInput=${(e: Event) => setException(i, { hours: (e.target as HTMLInputElement).value })} /></label>
        <button type="button" class="secondary" aria-label=${`Remove exception ${i + 1}`} onClick=${() => setExceptions((all) => all.filter((_, j) => j !== i))}>Remove</button>
      </div>`)}
      <div class="row"><button type="button" class="secondary" onClick=${() => setExceptions((all) => [...all, { date: '', hours: '' }])}>Add a date</button></div>
    </fieldset>
    <div class="row">
      <button type="submit" disabled=${busy || !name.trim()} data-testid="schedule-save">${schedule ? 'Save' : 'Add schedule'}</button>
      <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
    </div>
    <${ErrorPanel} error=${error} context="Save schedule" />
  </form>`
}
