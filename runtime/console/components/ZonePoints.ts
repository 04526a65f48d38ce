import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import type { Region } from '../../../shared/tasks/types.ts'
import { fraction } from '../zones.ts'

/** One zone's (or motion mask's) id, name and points as fields: the keyboard's way to edit what is drawn on the picture. */
export function PointList({ noun, zone, chosen, disabled, onChange, onChoose, onDelete }: {
  noun: string; zone: Region; chosen: boolean; disabled: boolean; onChange: (zone: Region) => void; onChoose: () => void; onDelete: () => void
}) {
  const title = `${noun === 'zone' ? 'Zone' : 'Mask'} ${zone.areaName || zone.areaId || 'without id'}`
  const setPoint = (index: number, key: 'xRatio' | 'yRatio') => (e: Event) => {
    const v = fraction((e.target as HTMLInputElement).value)
    if (v !== null) onChange({ ...zone, polygon: zone.polygon.map((p, i) => (i === index ? { ...p, [key]: v } : p)) })
  }
  const text = (key: 'areaId' | 'areaName') => (e: Event) => onChange({ ...zone, [key]: (e.target as HTMLInputElement).value })
  return html`<fieldset class=${`zone-fields stack${chosen ? ' chosen' : ''}`} data-testid="zone-fields" data-area-id=${zone.areaId}>
    <legend>${title}</legend>
    <div class="row">
      <label>${noun === 'zone' ? 'Zone' : 'Mask'} id<input value=${zone.areaId} maxLength=${64} required disabled=${disabled} onInput=${text('areaId')} data-testid="zone-id" /></label>
      <label>Name (optional)<input value=${zone.areaName ?? ''} maxLength=${128} disabled=${disabled} onInput=${text('areaName')} data-testid="zone-name" /></label>
    </div>
    <ol class="zone-points">${zone.polygon.map((p, i) => html`<li key=${i}>
      <label>x<${Coordinate} value=${p.xRatio} disabled=${disabled} label=${`${title}, point ${i + 1}, x`} onChange=${setPoint(i, 'xRatio')} /></label>
      <label>y<${Coordinate} value=${p.yRatio} disabled=${disabled} label=${`${title}, point ${i + 1}, y`} onChange=${setPoint(i, 'yRatio')} /></label>
      <button type="button" class="secondary" disabled=${disabled || zone.polygon.length <= 3} aria-label=${`Remove point ${i + 1} of ${title}`}
        onClick=${() => onChange({ ...zone, polygon: zone.polygon.filter((_, j) => j !== i) })}>Remove</button>
    </li>`)}</ol>
    <div class="row">
      <button type="button" class="secondary" aria-pressed=${chosen} disabled=${disabled} onClick=${onChoose}>Show its points on the picture</button>
      <button type="button" class="danger-outline" disabled=${disabled} onClick=${onDelete} data-testid="zone-delete">Delete ${title}</button>
    </div>
  </fieldset>`
}

/** A coordinate field: what is typed stays while it has the focus (a re-render from another change keeps it), the point's value otherwise. */
function Coordinate({ value, disabled, label, onChange }: { value: number; disabled: boolean; label: string; onChange: (e: Event) => void }) {
  const [typed, setTyped] = useState<string | null>(null)
  return html`<input type="number" min="0" max="1" step="0.001" value=${typed ?? value} disabled=${disabled} aria-label=${label}
    onFocus=${() => setTyped(String(value))} onInput=${(e: Event) => setTyped((e.target as HTMLInputElement).value)} onChange=${onChange} onBlur=${() => setTyped(null)} />`
}
