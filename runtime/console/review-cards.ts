import type { DeviceEvent } from '../client/types.ts'

/**
 * The Review page's model (docs/console-and-cli.md "Review"): one card per tracked object of a
 * stream task — entered, its alarms, the name its face was recognised as, left with its dwell —
 * built from the events of docs/events.md "Kinds", whether read from `Event/EventPage` or
 * pushed over the WebSocket. No browser API here: unit-tested on its own.
 */
export const REVIEW_KINDS = ['object.entered', 'object.left', 'object.recognized', 'alarm.raised'] as const
/** Live, the clips written afterwards are attached to the card of their event too. */
export const REVIEW_LIVE_KINDS = [...REVIEW_KINDS, 'recording.clipReady'] as const

export interface ReviewAlarm {
  eventId: number
  time: number
  alarmId: string
  policyId: string | null
  policyName: string | null
  message: string
  snapshotUrl: string | null
  clipUrl: string | null
}

export interface ReviewCard {
  /** `<taskId>/<objectId>`. */
  key: string
  taskId: string
  cameraId: string | null
  objectId: string
  label: string
  /** ms since epoch; null when the entry is older than what was read. */
  enteredAt: number | null
  entryEventId: number | null
  snapshotUrl: string | null
  /** The object's clip (an event clip of its visit), once written. */
  clipUrl: string | null
  alarms: ReviewAlarm[]
  recognized: { time: number; name: string; galleryId: string | null; similarity: number | null } | null
  leftAt: number | null
  dwellMs: number | null
  /** The newest event of the card: cards are shown newest first. */
  lastTime: number
}

/** An event as `Event/EventPage` answers it (with the clip the device attached) or as the WebSocket sends it. */
export type ReviewEvent = DeviceEvent & { clipUrl?: string | null }

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null)
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null)

/** The card an event belongs to; an alarm of several objects goes to its first. */
function keyOf(event: ReviewEvent): string | null {
  const p = event.payload
  const taskId = str(p.taskId)
  const objectId = str(p.objectId) ?? (Array.isArray(p.objectIds) ? str(p.objectIds[0]) : null)
  return taskId && objectId ? `${taskId}/${objectId}` : null
}

function blank(key: string, event: ReviewEvent, time: number): ReviewCard {
  const p = event.payload
  const objectId = key.slice(key.indexOf('/') + 1)
  return {
    key, taskId: String(p.taskId), cameraId: str(p.cameraId), objectId, label: str(p.label) ?? 'object',
    enteredAt: null, entryEventId: null, snapshotUrl: null, clipUrl: null, alarms: [], recognized: null, leftAt: null, dwellMs: null, lastTime: time,
  }
}

/**
 * The cards after one more event (a new Map; the cards it changes are new objects). Events may
 * arrive in any order (history and live); the caller drops repeats (same event id).
 */
export function applyEvent(cards: Map<string, ReviewCard>, event: ReviewEvent): Map<string, ReviewCard> {
  const p = event.payload
  const time = Date.parse(event.time)
  if (event.kind === 'recording.clipReady') {
    const eventId = num(p.eventId)
    const clipUrl = str(p.clipUrl)
    if (eventId === null || !clipUrl) return cards
    for (const card of cards.values()) {
      if (card.entryEventId === eventId) return new Map(cards).set(card.key, { ...card, clipUrl })
      if (card.alarms.some((a) => a.eventId === eventId))
        return new Map(cards).set(card.key, { ...card, alarms: card.alarms.map((a) => (a.eventId === eventId ? { ...a, clipUrl } : a)) })
    }
    return cards
  }
  const key = keyOf(event)
  if (!key) return cards
  const old = cards.get(key) ?? blank(key, event, time)
  const card: ReviewCard = { ...old, lastTime: Math.max(old.lastTime, time), cameraId: old.cameraId ?? str(p.cameraId) }
  if (event.kind === 'object.entered') {
    Object.assign(card, { enteredAt: time, entryEventId: event.id, snapshotUrl: str(p.snapshotUrl) ?? old.snapshotUrl, clipUrl: event.clipUrl ?? old.clipUrl, label: str(p.label) ?? old.label })
  } else if (event.kind === 'object.left') {
    Object.assign(card, { leftAt: time, dwellMs: num(p.dwellMs) })
  } else if (event.kind === 'object.recognized') {
    if (!old.recognized || old.recognized.time <= time)
      card.recognized = { time, name: str(p.name) ?? 'unknown', galleryId: str(p.galleryId), similarity: num(p.similarity) }
  } else if (event.kind === 'alarm.raised') {
    const alarm: ReviewAlarm = {
      eventId: event.id, time, alarmId: String(p.alarmId ?? event.id), policyId: str(p.policyId), policyName: str(p.policyName), message: str(p.message) ?? 'Alarm',
      snapshotUrl: str(p.snapshotUrl) ?? str(p.imageUrl), clipUrl: event.clipUrl ?? str(p.clipUrl),
    }
    card.alarms = [...old.alarms, alarm].sort((a, b) => a.time - b.time)
    // An alarm names the person too, when the task recognises faces.
    if (!old.recognized && str(p.name)) card.recognized = { time, name: str(p.name)!, galleryId: str(p.galleryId), similarity: num(p.similarity) }
  } else {
    return cards
  }
  return new Map(cards).set(key, card)
}

export interface ReviewFilter {
  cameraId: string
  label: string
  policyId: string
  /** ms since epoch, or null. */
  from: number | null
  to: number | null
}

/** The cards the filter lets through, newest first. */
export function shownCards(cards: Iterable<ReviewCard>, filter: ReviewFilter): ReviewCard[] {
  const label = filter.label.trim().toLowerCase()
  return [...cards].filter((c) => (!filter.cameraId || c.cameraId === filter.cameraId) &&
    (!label || c.label.toLowerCase() === label) &&
    (!filter.policyId || c.alarms.some((a) => a.policyId === filter.policyId)) &&
    (filter.from === null || (c.enteredAt ?? c.lastTime) >= filter.from) &&
    (filter.to === null || (c.enteredAt ?? c.lastTime) < filter.to))
    .sort((a, b) => b.lastTime - a.lastTime)
}
