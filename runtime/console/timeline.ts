/**
 * The Recordings page's timeline (docs/console-and-cli.md "Recordings"): a camera's day of
 * clips and events on one bar. Pure helpers: which clip covers a time, where a marker plays
 * from, the span the bar shows, and the rolls that apply to a camera's clips.
 */

export interface TimelineClip {
  clipId: string
  kind: string
  startTime: number
  endTime: number
  events?: { eventId: number | null; eventKind: string }[]
}

export interface TimelineEvent {
  id: number
  kind: string
  time: string
  payload: Record<string, unknown>
}

/** A camera's rolls (QueryRecordParam) and a policy's clip action, in seconds. */
export interface Rolls { preRollSeconds: number; postRollSeconds: number }

export const DAY_MS = 24 * 60 * 60 * 1000

/** Local midnight of a `yyyy-mm-dd` day and the next one, or null for anything else. */
export function dayRange(day: string): { from: number; to: number } | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day)
  if (!match) return null
  const from = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3])).getTime()
  const to = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]) + 1).getTime()
  return Number.isFinite(from) ? { from, to } : null
}

/** Today as `yyyy-mm-dd`, in the browser's time zone (the day an `<input type="date">` shows). */
export function localDay(time: number): string {
  const d = new Date(time)
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`
}

/**
 * The clip to play at `time`: one that covers it — the clip of `eventId` when one is given and
 * covers it, else an event clip, else a continuous one —; else the next clip after it (a gap
 * plays on from the next footage); else null.
 */
export function clipAt<T extends TimelineClip>(clips: T[], time: number, eventId?: number): T | null {
  const covering = clips.filter((c) => c.startTime <= time && time < c.endTime)
  const own = eventId === undefined ? undefined : covering.find((c) => c.events?.some((e) => e.eventId === eventId))
  const found = own ?? covering.find((c) => c.kind === 'event') ?? covering[0]
  if (found) return found
  const later = clips.filter((c) => c.startTime > time).sort((a, b) => a.startTime - b.startTime)
  return later[0] ?? null
}

/** Seconds into a clip to play `time` from (0 when it is before the clip's start). */
export const offsetIn = (clip: TimelineClip, time: number) => Math.max(0, (time - clip.startTime) / 1000)

/**
 * Where a marker plays from: its event's time less the pre-roll that applies to it — the alarm
 * policy's clip action's when it has one, else the camera's (the rolls its clip was cut with).
 */
export function markerStart(event: TimelineEvent, camera: Rolls, policyRolls: (policyId: string) => Rolls | null): number {
  const policyId = typeof event.payload.policyId === 'string' ? event.payload.policyId : null
  const rolls = event.kind === 'alarm.raised' && policyId ? policyRolls(policyId) ?? camera : camera
  return Date.parse(event.time) - rolls.preRollSeconds * 1000
}

/**
 * The span the bar shows: the whole day, or (`fit`) the day's clips and events with a margin of
 * a twentieth of their span (at least a minute) on each side, within the day.
 */
export function viewRange(day: { from: number; to: number }, clips: TimelineClip[], events: TimelineEvent[], fit: boolean): { from: number; to: number } {
  if (!fit) return day
  const times = [...clips.flatMap((c) => [c.startTime, c.endTime]), ...events.map((e) => Date.parse(e.time))].filter(Number.isFinite)
  if (times.length === 0) return day
  const first = Math.min(...times), last = Math.max(...times)
  const margin = Math.max(60_000, (last - first) / 20)
  return { from: Math.max(day.from, first - margin), to: Math.min(day.to, last + margin) }
}

/** A time's place on the bar, 0–100 (%). */
export const percentOf = (range: { from: number; to: number }, time: number) =>
  Math.min(100, Math.max(0, ((time - range.from) / (range.to - range.from)) * 100))

/** "−5 s / +10 s": what a clip holds before and after. */
export const rollsText = (rolls: Rolls) => `${rolls.preRollSeconds} s before, ${rolls.postRollSeconds} s after`
