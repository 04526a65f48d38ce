import { html } from 'htm/preact'
import { useRef, useState } from 'preact/hooks'
import type { Region } from '../../../shared/tasks/types.ts'
import { freshId, pointAt, type Point } from '../zones.ts'
import { PointList } from './ZonePoints.ts'

/**
 * Zones drawn over a camera's picture (docs/console-and-cli.md "Zones"): each zone a polygon;
 * "Draw a zone" then a click per corner adds one, a zone's points are dragged to move them,
 * and the point list beside the picture edits the same points from the keyboard.
 */
export function ZoneEditor({ picture, width, height, zones, onChange, disabled = false, noun = 'zone' }: {
  picture: string; width: number; height: number; zones: Region[]; onChange: (zones: Region[]) => void; disabled?: boolean
  /** What the polygons are: 'zone' (taskConfig.regions) or 'mask' (taskConfig.motionMasks). */
  noun?: 'zone' | 'mask'
}) {
  const [selected, setSelected] = useState<number | null>(zones.length ? 0 : null)
  const [drawing, setDrawing] = useState<Point[] | null>(null)
  const svg = useRef<SVGSVGElement>(null)
  const dragging = useRef<{ zone: number; point: number } | null>(null)
  const at = (e: MouseEvent) => pointAt(e.clientX, e.clientY, svg.current!.getBoundingClientRect())
  const setZone = (index: number, zone: Region) => onChange(zones.map((z, i) => (i === index ? zone : z)))
  const movePoint = (zone: number, point: number, to: Point) => setZone(zone, { ...zones[zone]!, polygon: zones[zone]!.polygon.map((p, i) => (i === point ? to : p)) })

  const click = (e: MouseEvent) => {
    if (disabled || drawing === null || (e.target as Element).tagName === 'circle') return
    setDrawing([...drawing, at(e)])
  }
  const move = (e: PointerEvent) => { if (dragging.current) movePoint(dragging.current.zone, dragging.current.point, at(e)) }
  const grab = (zone: number, point: number) => (e: PointerEvent) => {
    if (disabled || drawing !== null) return
    e.stopPropagation();
    (e.target as Element).setPointerCapture(e.pointerId)
    dragging.current = { zone, point }
  }
  const finish = () => {
    if (!drawing || drawing.length < 3) return
    onChange([...zones, { areaId: freshId(zones, noun), polygon: drawing }])
    setSelected(zones.length)
    setDrawing(null)
  }
  const addRectangle = () => {
    onChange([...zones, { areaId: freshId(zones, noun), polygon: [{ xRatio: 0.25, yRatio: 0.25 }, { xRatio: 0.75, yRatio: 0.25 }, { xRatio: 0.75, yRatio: 0.75 }, { xRatio: 0.25, yRatio: 0.75 }] }])
    setSelected(zones.length)
  }
  const remove = (index: number) => {
    onChange(zones.filter((_, i) => i !== index))
    setSelected(null)
  }
  const xy = (p: Point) => `${p.xRatio * width},${p.yRatio * height}`
  const handles = drawing ?? (selected !== null ? zones[selected]?.polygon : null) ?? []
  const r = Math.max(width, height) / 90

  return html`<div class="zone-editor stack" data-testid="zone-editor">
    <svg ref=${svg} class=${`zone-canvas${drawing ? ' drawing' : ''}`} viewBox=${`0 0 ${width} ${height}`} role="img" data-testid="zone-canvas"
      aria-label=${`Camera picture with ${zones.length} ${noun}${zones.length === 1 ? '' : 's'}${drawing ? `; drawing a ${noun}, ${drawing.length} points so far` : ''}`}
      onClick=${click} onPointerMove=${move} onPointerUp=${() => { dragging.current = null }} onPointerCancel=${() => { dragging.current = null }}>
      <image href=${picture} x="0" y="0" width=${width} height=${height} />
      ${zones.map((z, i) => html`<g key=${i} class=${`zone${i === selected && !drawing ? ' selected' : ''}`} data-area-id=${z.areaId}>
        <polygon points=${z.polygon.map(xy).join(' ')} vector-effect="non-scaling-stroke" onClick=${() => drawing === null && setSelected(i)} />
        <text x=${z.polygon[0]!.xRatio * width + r} y=${z.polygon[0]!.yRatio * height + 3 * r} font-size=${3 * r}>${z.areaName || z.areaId}</text>
      </g>`)}
      ${drawing ? html`<polyline class="zone drawing" points=${drawing.map(xy).join(' ')} vector-effect="non-scaling-stroke" />` : null}
      ${handles.map((p, i) => html`<circle key=${i} class="zone-point" cx=${p.xRatio * width} cy=${p.yRatio * height} r=${r} data-testid="zone-point" data-index=${i}
        onPointerDown=${selected !== null ? grab(selected, i) : undefined} />`)}
    </svg>
    <div class="row" role="group" aria-label=${`Drawing ${noun}s`}>
      ${drawing === null ? html`
        <button type="button" disabled=${disabled} onClick=${() => setDrawing([])} data-testid="zone-draw">Draw a ${noun}</button>
        <button type="button" class="secondary" disabled=${disabled} onClick=${addRectangle} data-testid="zone-add-rectangle">Add a rectangle</button>`
      : html`
        <button type="button" disabled=${drawing.length < 3} onClick=${finish} data-testid="zone-finish">Finish ${noun}</button>
        <button type="button" class="secondary" disabled=${drawing.length === 0} onClick=${() => setDrawing(drawing.slice(0, -1))}>Undo last point</button>
        <button type="button" class="secondary" onClick=${() => setDrawing(null)}>Cancel drawing</button>`}
    </div>
    <p class="hint" role="status" data-testid="zone-hint">${drawing ? `Click the picture at each corner of the ${noun} (${drawing.length} so far, 3 or more), then Finish ${noun}.`
      : `Drag a point of the chosen ${noun} to move it, or type its coordinates below (fractions of the picture, 0,0 top left).`}</p>
    ${zones.map((z, i) => html`<${PointList} key=${i} noun=${noun} zone=${z} chosen=${i === selected} disabled=${disabled}
      onChange=${(zone: Region) => setZone(i, zone)} onChoose=${() => setSelected(i)} onDelete=${() => remove(i)} />`)}
  </div>`
}
