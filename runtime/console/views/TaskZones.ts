import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { CameraCapture, StreamTaskStatus } from '../../client/types.ts'
import type { Region, TaskConfig } from '../../../shared/tasks/types.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { ZoneEditor } from '../components/ZoneEditor.ts'
import { usePicture } from '../picture.ts'
import { regionsOf, zonesProblem } from '../zones.ts'

/**
 * A stream task's zones (`taskConfig.regions`, spec 2.4) and motion masks (`taskConfig.motionMasks`) drawn on a capture of its camera
 * (Camera/capture) and saved with Task/update (docs/console-and-cli.md "Zones"). Alarm
 * policies then choose one of them.
 */
export function TaskZones({ client, task }: { client: DeviceClient; task: StreamTaskStatus }) {
  const [zones, setZones] = useState<Region[]>(() => (task.taskConfig as TaskConfig).regions ?? [])
  const [masks, setMasks] = useState<Region[]>(() => (task.taskConfig as TaskConfig).motionMasks ?? [])
  const [editing, setEditing] = useState<'zone' | 'mask'>('zone')
  const [capture, setCapture] = useState<CameraCapture | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const picture = usePicture(client, capture?.picture ?? null)

  const take = () => {
    setError(null)
    client.cameraCapture(task.cameraId).then(setCapture, setError)
  }
  useEffect(take, [])
  const change = (next: Region[]) => { (editing === 'zone' ? setZones : setMasks)(next); setNotice(null) }
  const problem = zonesProblem(zones) ?? zonesProblem(masks, 'mask', 16)
  const save = async () => {
    setBusy(true)
    setError(null)
    try {
      const regions = regionsOf(zones), motionMasks = regionsOf(masks)
      const { motionMasks: _old, ...rest } = task.taskConfig
      await client.streamTaskUpdate({ taskId: task.taskId, taskConfig: { ...rest, regions, ...(motionMasks.length ? { motionMasks } : {}) } })
      setNotice((regions.length ? `Saved ${regions.length} zone${regions.length === 1 ? '' : 's'}: ${regions.map((r) => r.areaId).join(', ')}.` : 'Saved: no zones, the whole picture counts.') +
        (motionMasks.length ? ` ${motionMasks.length} motion mask${motionMasks.length === 1 ? '' : 's'}: ${motionMasks.map((r) => r.areaId).join(', ')}.` : ''))
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  return html`<section class="stack" aria-labelledby="zones-heading" data-testid="task-zones">
    <h3 id="zones-heading">Zones and motion masks</h3>
    <p class="hint">Alarm policies can ask for an object in a zone (its box centre). Without zones the whole picture counts (zone <code>0</code>).
      Changes inside a motion mask (a clock, trees, a screen) wake no detection; objects there are still detected.</p>
    <fieldset class="row"><legend class="sr-only">Draw</legend>
      <label class="check"><input type="radio" name="zones-kind" checked=${editing === 'zone'} onChange=${() => setEditing('zone')} data-testid="edit-zones" /> Zones (${zones.length})</label>
      <label class="check"><input type="radio" name="zones-kind" checked=${editing === 'mask'} onChange=${() => setEditing('mask')} data-testid="edit-masks" /> Motion masks (${masks.length})</label>
    </fieldset>
    ${capture && picture.url ? html`<${ZoneEditor} key=${editing} noun=${editing} picture=${picture.url} width=${capture.width} height=${capture.height}
      zones=${editing === 'zone' ? zones : masks} onChange=${change} disabled=${busy} />`
      : error ?? picture.error ? null : html`<p role="status">Capturing a frame of the camera…</p>`}
    ${problem && zones.length ? html`<p class="hint" data-testid="zones-problem">${problem}</p>` : null}
    <div class="row">
      <button type="button" disabled=${busy || problem !== null} onClick=${save} data-testid="zones-save">Save zones</button>
      <button type="button" class="secondary" disabled=${busy} onClick=${take}>Capture again</button>
    </div>
    ${busy ? html`<p role="status">Saving the zones (the task reloads its pipeline)…</p>` : null}
    ${notice ? html`<p class="notice" role="status" data-testid="zones-notice">${notice}</p>` : null}
    <${ErrorPanel} error=${error ?? picture.error} context="Zones" />
  </section>`
}
