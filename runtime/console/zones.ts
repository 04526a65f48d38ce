import type { Region } from '../../shared/tasks/types.ts'

/**
 * Zones as the console draws them over a camera's picture: a task's `taskConfig.regions`
 * (spec 2.4, docs/cameras-and-stream-tasks.md "Stream tasks"), points as fractions of the
 * picture (0,0 top left, 1,1 bottom right).
 */
export type Point = Region['polygon'][number]
/** Fractions kept to 4 decimals: a tenth of a pixel on a 1920-wide picture, short in the API. */
const round = (v: number) => Math.round(Math.min(1, Math.max(0, v)) * 10_000) / 10_000

/** The picture point under the pointer: its position in the picture's box on the page, as fractions. */
export function pointAt(clientX: number, clientY: number, box: { left: number; top: number; width: number; height: number }): Point {
  return { xRatio: round((clientX - box.left) / box.width), yRatio: round((clientY - box.top) / box.height) }
}

/** A point typed into the point list (a fraction 0..1), null when it is not one. */
export function fraction(text: string): number | null {
  const v = Number(text)
  return text.trim() !== '' && Number.isFinite(v) && v >= 0 && v <= 1 ? round(v) : null
}

/** An id not used yet: zone-1, zone-2, … (mask-1, … for motion masks). */
export function freshId(zones: Region[], prefix = 'zone'): string {
  const used = new Set(zones.map((z) => z.areaId))
  let n = zones.length + 1
  while (used.has(`${prefix}-${n}`)) n++
  return `${prefix}-${n}`
}

/** Why the zones cannot be saved as they are, null when they can (RegionSchema: an id of 1–64 characters, 3–64 points; ids unique). */
export function zonesProblem(zones: Region[], noun = 'zone', most = 32): string | null {
  const ids = zones.map((z) => z.areaId.trim())
  if (ids.some((id) => id === '' || id.length > 64)) return `Give every ${noun} an id (up to 64 characters).`
  const twice = ids.find((id, i) => ids.indexOf(id) !== i)
  if (twice !== undefined) return `Two ${noun}s have the id ${twice}: give each its own.`
  if (zones.some((z) => z.polygon.length < 3 || z.polygon.length > 64)) return `A ${noun} needs 3 to 64 points.`
  if (zones.length > most) return `A task takes at most ${most} ${noun}s.`
  return null
}

/** The regions of a task's taskConfig, as the console stores them: ids trimmed, no empty name. */
export function regionsOf(zones: Region[]): Region[] {
  return zones.map((z) => ({ areaId: z.areaId.trim(), ...(z.areaName?.trim() ? { areaName: z.areaName.trim() } : {}), polygon: z.polygon }))
}

/**
 * The regions a policy of this scope (`task:<id>`, `camera:<id>`, '' for any task) can name:
 * each watched task's zones, or the whole picture (`0`) of a task without zones — as the API
 * checks them (docs/alarms-and-schedules.md "Alarm policies").
 */
export function regionChoices(scope: string, tasks: { taskId: string; cameraId: string; taskName: string | null; taskConfig: Record<string, unknown> }[]): { areaId: string; label: string }[] {
  const [kind, id] = scope.split(/:(.*)/s)
  const watched = tasks.filter((t) => (kind === 'task' ? t.taskId === id : kind === 'camera' ? t.cameraId === id : true))
  const out = new Map<string, string>()
  for (const t of watched) {
    const regions = (t.taskConfig as { regions?: Region[] }).regions ?? []
    if (regions.length === 0 && !out.has('0')) out.set('0', 'Whole picture (0)')
    for (const r of regions) if (!out.has(r.areaId)) out.set(r.areaId, r.areaName && r.areaName !== r.areaId ? `${r.areaName} (${r.areaId})` : r.areaId)
  }
  return [...out].map(([areaId, label]) => ({ areaId, label }))
}
