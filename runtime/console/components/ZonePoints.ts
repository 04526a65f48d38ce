import { html } from 'htm/preact'
import type { Region } from '../../../shared/tasks/types.ts'
import { fraction } from '../zones.ts'

/** One zone's id, name and points as fields: the keyboard's way to edit what is drawn on the picture. */
export function PointList({ zone, chosen, disabled, onChange, onChoose, onDelete }: {
  zone: Region; chosen: boolean; disabled: boolean; onChange: (zone: Region) => void; onChoose: () => void; onDelete: () => void
}) {
  const title = zone.areaName || zone.areaId || 'without id'
  const setPoint = (index: number, key: 'xRatio' | 'yRatio') => (e: Event) => {
    const v = fraction((e.target as HTMLInputElement).value)
    if (v !== null) onChange({ ...zone, polygon: zone.polygon.map((p, i) => (i === index ? { ...p, [key]: v } : p)) })
  }
  const text = (key: 'areaId' | 'areaName') => (e: Event) => onChange({ ...zone, [key]: (e.target as HTMLInputElement).value })
  return html`<fieldset class=${`zone-fields stack${chosen ? ' chosen' : ''}`} data-testid="zone-fields" data-area-id=${zone.areaId}>
    <legend>Zone ${title}</legend>
    <div class="row">
      <label>Zone id<input value=${zone.areaId} maxLength=${64} required disabled=${disabled} onInput=${text('areaId')} data-testid="zone-id" /></label>
      <label>Name (optional)<input value=${zone.areaName ?? ''} maxLength=${128} disabled=${disabled} onInput=${text('areaName')} data-testid="zone-name" /></label>
    </div>
    <ol class="zone-points">${zone.polygon.map((p, i) => html`<li key=${i}>
      <label>x<input type="number" min="0" max="1" step="0.001" value=${p.xRatio} disabled=${disabled} aria-label=${`Zone ${title}, point ${i + 1}, x`} onChange=${setPoint(i, 'xRatio')} /></label>
      <label>y<input type="number" min="0" max="1" step="0.001" value=${p.yRatio} disabled=${disabled} aria-label=${`Zone ${title}, point ${i + 1}, y`} onChange=${setPoint(i, 'yRatio')} /></label>
      <button type="button" class="secondary" disabled=${disabled || zone.polygon.length <= 3} aria-label=${`Remove point ${i + 1} of zone ${title}`}
        onClick=${() => onChange({ ...zone, polygon: zone.polygon.filter((_, j) => j !== i) })}>Remove</button>
    </li>`)}</ol>
    <div class="row">
      <button type="button" class="secondary" aria-pressed=${chosen} disabled=${disabled} onClick=${onChoose}>Show its points on the picture</button>
      <button type="button" class="danger-outline" disabled=${disabled} onClick=${onDelete} data-testid="zone-delete">Delete zone ${title}</button>
    </div>
  </fieldset>`
}
