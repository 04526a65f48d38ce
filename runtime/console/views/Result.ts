import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import { allTargets, type Area, type DetectionResult, type Target } from '../../client/types.ts'
import type { DeviceClient } from '../../client/client.ts'
import { usePicture } from '../picture.ts'
import { AddFaceToGallery } from '../components/AddFaceToGallery.ts'

const ms = (v: number) => `${Math.round(v)} ms`
/** The sidecar's own stages (header, admission, decode, pipeline, overlay); `node.*` are inside `pipeline`. */
const stagesTotal = (timings: Record<string, number>) => Object.entries(timings).filter(([k]) => !k.startsWith('node.')).reduce((sum, [, v]) => sum + v, 0)

/** A logic node's decision in an area (spec 2.6 bLogicResult), when its targets carry one. */
const decided = (area: Area) => {
  const judged = area.targetList.filter((t) => typeof t.bLogicResult === 'boolean')
  return judged.length ? { met: judged.filter((t) => t.bLogicResult).length, of: judged.length } : null
}

const isFace = (t: Target) => (t.confidence ?? []).some((c) => c.label === 'face')
const best = (t: Target) => [...(t.confidence ?? [])].sort((a, b) => b.confidence - a.confidence)[0]

/** The raw JSON with the (large) fullPicture abbreviated. */
const rawJson = (result: DetectionResult) => JSON.stringify({
  ...result,
  fullPicture: result.fullPicture.length > 120 ? `${result.fullPicture.slice(0, 80)}… (${result.fullPicture.length} characters)` : result.fullPicture,
}, null, 2)

/**
 * A detection result (spec 2.6): the annotated fullPicture (URL or data URL), the targets of
 * every area merged, overlays for landmarks (pixel coordinates) and mask polygons (normalized).
 * Given the original picture (and the account, for its upload), each face offers "Add to gallery".
 */
export function Result({ client, result, timings, picture: original, account }: {
  client: DeviceClient; result: DetectionResult; timings?: Record<string, number> | null; picture?: File | null; account?: string
}) {
  const targets = allTargets(result)
  // A URL-mode fullPicture (docs/detection.md "Image detection") needs the mtk, which an <img> cannot send.
  const picture = usePicture(client, result.fullPicture)
  const [size, setSize] = useState<{ width: number; height: number } | null>(null)
  const [showLandmarks, setShowLandmarks] = useState(true)
  const [showPolygons, setShowPolygons] = useState(true)
  const [selected, setSelected] = useState<number | null>(null)
  const [adding, setAdding] = useState<number | null>(null)
  const canAdd = !!original && account !== undefined && targets.some(isFace)
  useEffect(() => setAdding(null), [result])
  const landmarkCount = targets.reduce((n, t) => n + (t.landmark?.length ?? 0), 0)
  const polygonCount = targets.filter((t) => (t.maskPolygon?.length ?? 0) > 2).length

  const overlay = size ? html`<svg class="overlay" viewBox=${`0 0 ${size.width} ${size.height}`} preserveAspectRatio="none" aria-hidden="true">
    ${showPolygons ? targets.map((t) => (t.maskPolygon?.length ?? 0) > 2
      ? html`<polygon class="mask" points=${t.maskPolygon!.map((p) => `${p.xRatio * size.width},${p.yRatio * size.height}`).join(' ')} />` : null) : null}
    ${showLandmarks ? targets.flatMap((t) => (t.landmark ?? []).map((p) =>
      html`<circle class="landmark" cx=${p.xRatio} cy=${p.yRatio} r=${Math.max(2, size.width / 300)} />`)) : null}
    ${selected !== null && targets[selected] ? html`<rect class="selected" x=${targets[selected]!.box.x} y=${targets[selected]!.box.y} width=${targets[selected]!.box.width} height=${targets[selected]!.box.height} />` : null}
  </svg>` : null

  return html`<section class="result" aria-labelledby="result-heading">
    <h2 id="result-heading"><span data-testid="target-count">${targets.length}</span> ${targets.length === 1 ? 'target' : 'targets'} found</h2>
    <p class="hint">Algorithm <code>${result.algorithmCode}</code> · ${result.areaList.length} area(s) · ${new Date(Number(result.timestamp)).toLocaleString()}</p>
    ${timings ? html`<p class="hint">Inference <strong data-testid="inference-time">${ms(stagesTotal(timings))}</strong> (${
      Object.entries(timings).filter(([k]) => !k.startsWith('node.')).map(([k, v]) => `${k} ${ms(v)}`).join(', ')})</p>` : null}
    <ul class="areas" data-testid="areas">${result.areaList.map((area) => html`<li>
      ${result.areaList.length > 1 || area.areaName ? html`<span>${area.areaName || area.areaId}: </span>` : null}<abbr title="bDetected (spec 2.6): the area's logic condition, not whether targets were found; a pipeline without a logic node answers no">Area logic triggered</abbr>: <strong data-testid="area-detected">${area.bDetected ? 'yes' : 'no'}</strong>
      ${decided(area) ? html` · condition met by <span data-testid="area-met">${decided(area)!.met}</span> of ${decided(area)!.of} target(s)` : null}
    </li>`)}</ul>
    <div class="toggles" role="group" aria-label="Overlays">
      <label><input type="checkbox" checked=${showLandmarks} disabled=${!landmarkCount} onChange=${(e: Event) => setShowLandmarks((e.target as HTMLInputElement).checked)} data-testid="toggle-landmarks" /> Landmarks (${landmarkCount})</label>
      <label><input type="checkbox" checked=${showPolygons} disabled=${!polygonCount} onChange=${(e: Event) => setShowPolygons((e.target as HTMLInputElement).checked)} data-testid="toggle-polygons" /> Polygons (${polygonCount})</label>
    </div>
    <figure class="picture">
      ${picture.url ? html`<img src=${picture.url} alt=${`Annotated image with ${targets.length} detected targets`} data-testid="full-picture"
        onLoad=${(e: Event) => { const img = e.target as HTMLImageElement; setSize({ width: img.naturalWidth, height: img.naturalHeight }) }} />` : html`<p class="hint" role="status">${picture.error ? 'The annotated picture could not be loaded.' : 'Loading the annotated picture…'}</p>`}
      ${overlay}
    </figure>
    <div class="table-wrap">
      <table class="cards" data-testid="targets">
        <caption class="sr-only">Detected targets</caption>
        <thead><tr><th scope="col">#</th><th scope="col">Label</th><th scope="col">Confidence</th><th scope="col">x</th><th scope="col">y</th><th scope="col">Width</th><th scope="col">Height</th><th scope="col">Landmarks</th>${canAdd ? html`<th scope="col"><span class="sr-only">Gallery</span></th>` : null}</tr></thead>
        <tbody>${targets.map((t, i) => {
          const top = best(t)
          return html`<tr tabindex="0" aria-selected=${selected === i} onFocus=${() => setSelected(i)} onMouseEnter=${() => setSelected(i)}>
            <td data-label="#">${i + 1}</td><td data-label="Label">${(t.confidence ?? []).map((c) => c.label).join(', ') || '-'}</td><td data-label="Confidence">${top ? top.confidence.toFixed(3) : '-'}</td>
            <td data-label="x">${Math.round(t.box.x)}</td><td data-label="y">${Math.round(t.box.y)}</td><td data-label="Width">${Math.round(t.box.width)}</td><td data-label="Height">${Math.round(t.box.height)}</td><td data-label="Landmarks">${t.landmark?.length ?? 0}</td>
            ${canAdd ? html`<td>${isFace(t) ? html`<button type="button" class="secondary" aria-label=${`Add to gallery: face ${i + 1}`} aria-expanded=${adding === i}
              onClick=${() => setAdding(adding === i ? null : i)}>Add to gallery</button>` : null}</td>` : null}
          </tr>`
        })}</tbody>
      </table>
    </div>
    ${canAdd && adding !== null && targets[adding] ? html`<${AddFaceToGallery} key=${adding} client=${client} account=${account!} picture=${original!}
      box=${targets[adding]!.box} title=${`Face ${adding + 1}`} onClose=${() => setAdding(null)} />` : null}
    <details class="raw"><summary>Raw JSON</summary><pre data-testid="raw-json">${rawJson(result)}</pre></details>
  </section>`
}
