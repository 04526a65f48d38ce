import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { LogLine, LogQuery } from '../../client/types.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'

const FOLLOW_MS = 2000
const MAX_LINES = 500
const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' } as Record<number, string>
type Level = NonNullable<LogQuery['level']>

/** Fields every line has, shown in their own columns; the rest follow the message. */
const OWN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'area', 'component', 'requestId'])
const areaOf = (line: LogLine) => String(line.area ?? line.component ?? '')
/** Lines that arrive again in a later poll (same millisecond window) are shown once. */
const keyOf = (line: LogLine) => JSON.stringify(line)
const timeOf = (ms: number) => {
  const d = new Date(ms)
  return `${d.toLocaleDateString()} ${d.toLocaleTimeString()}.${String(d.getMilliseconds()).padStart(3, '0')}`
}
const extra = (line: LogLine) => Object.entries(line).filter(([k]) => !OWN.has(k))
  .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(' ')

/**
 * The device's log (QueryLogs): minimum level and text searched on the device, area chosen
 * from the lines shown, newest first; "Follow" asks every 2 s for the lines since the newest.
 */
export function Logs({ client }: { client: DeviceClient }) {
  const [level, setLevel] = useState<Level>('info')
  const [text, setText] = useState('')
  const [area, setArea] = useState('')
  const [follow, setFollow] = useState(true)
  const [lines, setLines] = useState<LogLine[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const newest = useRef<number | null>(null)
  const seen = useRef(new Set<string>())

  useEffect(() => {
    let live = true
    newest.current = null
    seen.current = new Set()
    setLines(null)
    const query = (extraQuery: LogQuery) => client.polling.queryLogs({ level, ...(text ? { text } : {}), pageSize: 200, ...extraQuery })
    const take = (rows: LogLine[]) => {
      const fresh = rows.filter((l) => !seen.current.has(keyOf(l)))
      for (const l of fresh) seen.current.add(keyOf(l))
      if (fresh.length) newest.current = Math.max(newest.current ?? 0, ...fresh.map((l) => l.time))
      setLines((old) => [...fresh, ...(old ?? [])].sort((a, b) => b.time - a.time).slice(0, MAX_LINES))
      setError(null)
    }
    const debounce = setTimeout(() => {
      query({}).then((page) => live && take(page.rows), (e) => live && setError(e))
    }, text ? 300 : 0)
    const timer = follow ? setInterval(() => {
      query(newest.current === null ? {} : { startTime: newest.current }).then((page) => live && take(page.rows), (e) => live && setError(e))
    }, FOLLOW_MS) : null
    return () => { live = false; clearTimeout(debounce); if (timer) clearInterval(timer) }
  }, [level, text, follow])

  const areas = [...new Set((lines ?? []).map(areaOf).filter(Boolean))].sort()
  const shown = (lines ?? []).filter((l) => !area || areaOf(l) === area)
  return html`<main class="logs" id="main">
    <h1 tabindex="-1">Logs</h1>
    <section class="panel stack" aria-labelledby="log-heading">
      <h2 id="log-heading" class="sr-only">Log lines</h2>
      <div class="filters">
        <label>Minimum level<select value=${level} onChange=${(e: Event) => setLevel((e.target as HTMLSelectElement).value as Level)} data-testid="log-level">
          ${Object.values(LEVELS).map((l) => html`<option value=${l}>${l}</option>`)}
        </select></label>
        <label>Area<select value=${area} onChange=${(e: Event) => setArea((e.target as HTMLSelectElement).value)} data-testid="log-area">
          <option value="">All areas</option>
          ${areas.map((a) => html`<option value=${a}>${a}</option>`)}
        </select></label>
        <label>Text<input type="search" value=${text} maxLength=${256} placeholder="any field contains…" data-testid="log-text"
          onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></label>
        <label class="check"><input type="checkbox" checked=${follow} onChange=${(e: Event) => setFollow((e.target as HTMLInputElement).checked)} data-testid="log-follow" /> Follow live</label>
      </div>
      <${ErrorPanel} error=${error} context="Logs" />
      ${lines === null && !error ? html`<p class="hint">Loading…</p>` : null}
      ${lines && !shown.length ? html`<p data-testid="no-logs">No log lines match.</p>` : null}
      <ol class="log-lines" data-testid="log-lines" aria-live=${follow ? 'polite' : 'off'} tabindex="0" aria-label="Log lines, newest first">
        ${shown.map((l) => html`<li class=${`log-${LEVELS[l.level] ?? 'info'}`}>
          <time>${timeOf(l.time)}</time> <strong class="log-level">${LEVELS[l.level] ?? l.level}</strong>
          ${areaOf(l) ? html` <span class="badge">${areaOf(l)}</span>` : null} <span class="log-msg">${l.msg ?? ''}</span>
          ${l.requestId ? html` <code>${String(l.requestId)}</code>` : null}
          ${extra(l) ? html`<div class="payload">${extra(l)}</div>` : null}
        </li>`)}
      </ol>
    </section>
  </main>`
}
