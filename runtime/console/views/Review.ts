import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { ClipPlayer } from '../components/ClipPlayer.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { alarmSound } from '../alarm-sound.ts'
import { LIVE_TEXT, useLiveEvents } from '../live-events.ts'
import { useNames, type Names } from '../names.ts'
import { usePicture } from '../picture.ts'
import { applyEvent, REVIEW_KINDS, REVIEW_LIVE_KINDS, shownCards, type ReviewCard, type ReviewEvent, type ReviewFilter } from '../review-cards.ts'

/** Events read back when the page opens (the newest), besides those pushed live. */
const HISTORY = 200
/** `datetime-local` value (browser time) → ms since epoch. */
const millis = (local: string) => (local ? new Date(local).getTime() : null)
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const clock = (ms: number) => new Date(ms).toLocaleTimeString()
const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

/**
 * The operator's review desk (docs/console-and-cli.md "Review"): one card per tracked object —
 * entered, its alarms, the name its face was recognised as, left with its dwell — with its
 * snapshot (click to enlarge) and clip, pushed live over the event WebSocket (spec 6) without a
 * click; cameras, tasks, policies and galleries by name; filters by camera, label, policy and
 * time.
 */
export function Review({ client }: { client: DeviceClient }) {
  const names = useNames(client)
  const [cards, setCards] = useState<Map<string, ReviewCard>>(new Map())
  const [filter, setFilter] = useState({ cameraId: '', label: '', policyId: '', from: '', to: '' })
  const [failure, setFailure] = useState<Failure | null>(null)
  const [loaded, setLoaded] = useState(false)
  const [sound, setSound] = useState(alarmSound.enabled())
  const seen = useRef(new Set<number>())

  const take = (events: ReviewEvent[]) => {
    const fresh = events.filter((e) => !seen.current.has(e.id))
    if (!fresh.length) return
    for (const e of fresh) seen.current.add(e.id)
    // Oldest first: an object enters before it leaves.
    fresh.sort((a, b) => a.id - b.id)
    setCards((old) => fresh.reduce(applyEvent, old))
  }

  const from = millis(filter.from)
  const to = millis(filter.to)
  const loadHistory = () => client.eventPage({
    kinds: [...REVIEW_KINDS], pageSize: HISTORY, ...(from !== null ? { startTime: new Date(from).toISOString() } : {}), ...(to !== null ? { endTime: new Date(to).toISOString() } : {}),
  }).then((page) => { take(page.rows as ReviewEvent[]); setLoaded(true); setFailure(null) }, (e) => { setLoaded(true); setFailure({ error: e, context: 'Events' }) })

  // A new time range reads its events afresh; live events keep arriving meanwhile.
  useEffect(() => {
    seen.current = new Set()
    setCards(new Map())
    loadHistory()
  }, [filter.from, filter.to])

  const state = useLiveEvents(client, {
    kinds: [...REVIEW_LIVE_KINDS],
    onEvent: (event) => {
      take([event as ReviewEvent])
      // A task or camera made after the names were read is named on its first event.
      if (event.kind === 'object.entered') names.task(event.payload.taskId)
    },
    // Whatever happened between the first read and the connection (the listener sends only what follows).
    onReady: () => { loadHistory() },
  })

  const set = (key: keyof typeof filter) => (e: Event) => setFilter((f) => ({ ...f, [key]: (e.target as HTMLInputElement).value }))
  const shownFilter: ReviewFilter = { cameraId: filter.cameraId, label: filter.label, policyId: filter.policyId, from, to }
  const shown = shownCards(cards.values(), shownFilter)
  const labels = [...new Set([...cards.values()].map((c) => c.label))].sort()

  return html`<main class="review" id="main">
    <h1 tabindex="-1">Review</h1>
    <div class="stack">
      <form class="panel stack" aria-labelledby="review-filter-heading" onSubmit=${(e: Event) => e.preventDefault()} data-testid="review-filter">
        <h2 id="review-filter-heading">Show <span class=${`badge ${state}`} data-testid="review-state">${LIVE_TEXT[state]}</span></h2>
        <div class="row filters">
          <label>Camera<select value=${filter.cameraId} onChange=${set('cameraId')} data-testid="review-camera"><option value="">Any</option>
            ${names.cameras.map((c) => html`<option value=${c.cameraId}>${c.cameraName}</option>`)}</select></label>
          <label>Label<input value=${filter.label} maxLength=${64} list="review-labels" placeholder="e.g. person" onInput=${set('label')} data-testid="review-label" /></label>
          <datalist id="review-labels">${labels.map((l) => html`<option value=${l} />`)}</datalist>
          <label>Alarm policy<select value=${filter.policyId} onChange=${set('policyId')} data-testid="review-policy"><option value="">Any (also no alarm)</option>
            ${names.policies.map((p) => html`<option value=${p.policyId}>${p.policyName}</option>`)}</select></label>
          <label>From<input type="datetime-local" value=${filter.from} onInput=${set('from')} data-testid="review-from" /></label>
          <label>To<input type="datetime-local" value=${filter.to} onInput=${set('to')} data-testid="review-to" /></label>
        </div>
        <label class="check"><input type="checkbox" checked=${sound} data-testid="alarm-sound"
          onChange=${(e: Event) => { const on = (e.target as HTMLInputElement).checked; alarmSound.set(on); setSound(on) }} /> Sound on alarms (every page)</label>
      </form>
      <section class="panel stack" aria-labelledby="review-cards-heading">
        <h2 id="review-cards-heading">Objects <span class="badge" data-testid="review-count">${shown.length}</span></h2>
        <${ErrorPanel} ...${failure} />
        ${!loaded ? html`<p class="hint">Loading…</p>` : shown.length === 0 ? html`<p data-testid="review-empty">No object seen${cards.size ? ' matches the filter' : ' yet: objects appear here as the stream tasks see them'}.</p>` : null}
        <ol class="review-cards" aria-live="polite" data-testid="review-cards">
          ${shown.map((card) => html`<${Card} key=${card.key} client=${client} card=${card} names=${names} />`)}
        </ol>
      </section>
    </div>
  </main>`
}

function Card({ client, card, names }: { client: DeviceClient; card: ReviewCard; names: Names }) {
  const snapshot = card.snapshotUrl ?? card.alarms[0]?.snapshotUrl ?? null
  const picture = usePicture(client, snapshot)
  const [enlarged, setEnlarged] = useState(false)
  const who = card.recognized ? (card.recognized.name === 'unknown' ? 'a stranger' : card.recognized.name) : null
  const title = `${capital(card.label)}${who ? ` (${who})` : ''} on ${names.camera(card.cameraId) || 'a camera'}`
  const clip = [...card.alarms].reverse().find((a) => a.clipUrl)?.clipUrl ?? card.clipUrl
  return html`<li class="review-card" data-testid="review-card" data-object-id=${card.objectId} data-task-id=${card.taskId} data-state=${card.leftAt ? 'left' : 'present'}>
    ${picture.url ? html`<button type="button" class="snapshot" onClick=${() => setEnlarged(true)} aria-label=${`Enlarge the snapshot: ${title}`} data-testid="review-snapshot-open">
      <img src=${picture.url} alt=${`Snapshot: ${title}`} data-testid="review-snapshot" />
    </button>` : html`<div class="snapshot missing" aria-hidden="true"></div>`}
    <div class="stack">
      <h3 data-testid="review-title">${title}</h3>
      <p class="hint" data-testid="review-where">Task ${names.task(card.taskId)} · ${card.leftAt
        ? html`<span data-testid="review-dwell">left after ${seconds(card.dwellMs ?? 0)}</span>` : html`<span class="badge open">in view</span>`}</p>
      <ol class="review-steps" data-testid="review-steps">
        ${card.enteredAt !== null ? html`<li data-step="entered"><time>${clock(card.enteredAt)}</time> entered</li>` : null}
        ${card.alarms.map((a) => html`<li data-step="alarm" class="alarm"><time>${clock(a.time)}</time> alarm <strong data-testid="review-alarm">${a.policyId ? names.policy(a.policyId, a.policyName) : a.message}</strong></li>`)}
        ${card.recognized ? html`<li data-step="recognized"><time>${clock(card.recognized.time)}</time> recognised as <strong data-testid="review-name">${who}</strong>${card.recognized.galleryId ? ` (gallery ${names.gallery(card.recognized.galleryId)})` : ''}</li>` : null}
        ${card.leftAt !== null ? html`<li data-step="left"><time>${clock(card.leftAt)}</time> left${card.dwellMs !== null ? ` after ${seconds(card.dwellMs)}` : ''}</li>` : null}
      </ol>
      ${clip ? html`<${ClipPlayer} key=${clip} client=${client} clipUrl=${clip} label=${title} testId="review" />` : null}
    </div>
    ${enlarged && picture.url ? html`<${Enlarged} src=${picture.url} title=${title} onClose=${() => setEnlarged(false)} />` : null}
  </li>`
}

/** The snapshot at its own size in a modal (native <dialog>: Escape closes). */
function Enlarged({ src, title, onClose }: { src: string; title: string; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    dialog.current?.showModal()
    return () => dialog.current?.close()
  }, [])
  return html`<dialog ref=${dialog} class="enlarged" aria-label=${`Snapshot: ${title}`} onCancel=${(e: Event) => { e.preventDefault(); onClose() }} data-testid="review-enlarged">
    <img src=${src} alt=${`Snapshot: ${title}`} data-testid="review-enlarged-image" />
    <div class="row"><button type="button" class="secondary" autofocus onClick=${onClose}>Close</button></div>
  </dialog>`
}
