import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import { uuid, type DeviceClient } from '../../client/client.ts'
import type { AlgorithmRow, CameraView } from '../../client/types.ts'
import type { ScheduleView } from '../../../shared/schedules/types.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { polygonOf } from '../region.ts'

/** Offered first when installed: the algorithm a camera is most often watched with. */
const PREFERRED_ALGORITHM = 'person-detector'

/**
 * Starts a stream task (spec 4.9 TaskCreate, docs/cameras-and-stream-tasks.md "Stream tasks"): a camera, an algorithm,
 * the frames analysed per second, motion gating, a schedule and a region (`taskConfig.regions`,
 * which alarm policies name by its id). Creation loads the pipeline (up to 120 s).
 */
export function StreamTaskForm({ client, cameras, cameraId, onCreated }: {
  client: DeviceClient
  cameras: CameraView[] | null
  cameraId: string | null
  onCreated: (taskId: string, taskName: string | null) => void
}) {
  const [algorithms, setAlgorithms] = useState<AlgorithmRow[] | null>(null)
  const [algorithmError, setAlgorithmError] = useState<unknown>(null)
  const [camera, setCamera] = useState(cameraId ?? '')
  const [algorithm, setAlgorithm] = useState('')
  const [targetFps, setTargetFps] = useState('5')
  const [motionGating, setMotionGating] = useState(true)
  const [taskId, setTaskId] = useState('')
  const [taskName, setTaskName] = useState('')
  const [schedules, setSchedules] = useState<ScheduleView[]>([])
  const [scheduleId, setScheduleId] = useState('')
  const [regionId, setRegionId] = useState('')
  const [corners, setCorners] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)

  useEffect(() => {
    client.algorithmPage({ algorithmUsage: '2' }).then((page) => {
      setAlgorithms(page.rows)
      setAlgorithm((page.rows.find((a) => a.algorithmId === PREFERRED_ALGORITHM) ?? page.rows[0])?.algorithmId ?? '')
    }, setAlgorithmError)
    client.call('/gtw/cwai/schedule/page', { pageNum: 1, pageSize: 500 }).then((page) => setSchedules(page.rows), () => undefined)
  }, [])
  useEffect(() => { if (!camera && cameras?.[0]) setCamera(cameras[0].cameraId) }, [cameras])

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const id = taskId.trim() || uuid()
      const regions = polygon && regionId.trim() ? [{ areaId: regionId.trim(), polygon }] : null
      await client.streamTaskCreate({
        taskId: id, ...(taskName.trim() ? { taskName: taskName.trim() } : {}), algorithmCode: algorithm, cameraId: camera, targetFps: Number(targetFps), motionGating,
        ...(scheduleId ? { scheduleId } : {}), ...(regions ? { taskConfig: { regions } } : {}),
      })
      setTaskId('')
      setTaskName('')
      setRegionId('')
      setCorners('')
      onCreated(id, taskName.trim() || null)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  const fps = Number(targetFps)
  // A region needs both its id and its corners, or neither.
  const polygon = polygonOf(corners)
  const regionOk = (regionId.trim() === '' && corners.trim() === '') || (regionId.trim() !== '' && polygon !== null)
  const complete = camera !== '' && algorithm !== '' && fps > 0 && fps <= 60 && regionOk
  return html`<form class="panel stack" onSubmit=${submit} aria-busy=${busy} aria-labelledby="stream-create-heading" data-testid="stream-task-form">
    <h2 id="stream-create-heading">Analyse a camera</h2>
    ${cameras?.length === 0 ? html`<p>No cameras yet. <a href="#/cameras">Add a camera</a> first.</p>` : null}
    <label>Name
      <input name="taskName" value=${taskName} maxLength=${128} disabled=${busy} placeholder="e.g. Front door people" data-testid="stream-name"
        onInput=${(e: Event) => setTaskName((e.target as HTMLInputElement).value)} />
    </label>
    <label>Camera
      <select name="cameraId" value=${camera} disabled=${busy || !cameras?.length} data-testid="stream-camera"
        onChange=${(e: Event) => setCamera((e.target as HTMLSelectElement).value)}>
        ${cameras === null ? html`<option value="">Loading…</option>` : null}
        ${(cameras ?? []).map((c) => html`<option value=${c.cameraId}>${c.cameraName} (${c.status})</option>`)}
      </select>
    </label>
    <label>Algorithm
      <select name="algorithmCode" value=${algorithm} disabled=${busy || !algorithms?.length} data-testid="stream-algorithm"
        onChange=${(e: Event) => setAlgorithm((e.target as HTMLSelectElement).value)}>
        ${algorithms === null && !algorithmError ? html`<option value="">Loading…</option>` : null}
        ${(algorithms ?? []).map((a) => html`<option value=${a.algorithmId}>${a.algorithmName || a.algorithmId}</option>`)}
      </select>
    </label>
    <${ErrorPanel} error=${algorithmError} context="Algorithms" />
    <label>Frames analysed per second
      <input name="targetFps" type="number" min="0.1" max="60" step="any" value=${targetFps} required disabled=${busy} data-testid="stream-fps" aria-describedby="stream-fps-hint"
        onInput=${(e: Event) => setTargetFps((e.target as HTMLInputElement).value)} />
    </label>
    <p class="hint" id="stream-fps-hint">At most the camera’s own frame rate. Frames the detector cannot keep up with are dropped (oldest first) and counted.</p>
    <label class="check"><input type="checkbox" checked=${motionGating} disabled=${busy} data-testid="stream-motion"
      onChange=${(e: Event) => setMotionGating((e.target as HTMLInputElement).checked)} /> Motion gating: run the detector on motion, while objects are tracked, and at least once a second</label>
    <label>Schedule
      <select name="scheduleId" value=${scheduleId} disabled=${busy} data-testid="stream-schedule" onChange=${(e: Event) => setScheduleId((e.target as HTMLSelectElement).value)}>
        <option value="">Always (no schedule)</option>
        ${schedules.map((s) => html`<option value=${s.scheduleId}>${s.scheduleName}</option>`)}
      </select>
    </label>
    <fieldset class="stack"><legend>Region (optional)</legend>
      <p class="hint" id="stream-region-hint">Alarm policies can ask for an object in this region (its box centre). Corners as x,y fractions of the picture, 0,0 top left to 1,1 bottom right, e.g. 0.3,0 0.85,0 0.85,1 0.3,1.</p>
      <label>Region id
        <input name="areaId" value=${regionId} maxLength=${64} disabled=${busy} placeholder="e.g. door" data-testid="stream-region-id"
          onInput=${(e: Event) => setRegionId((e.target as HTMLInputElement).value)} />
      </label>
      <label>Corners
        <input name="polygon" value=${corners} disabled=${busy} aria-describedby="stream-region-hint" aria-invalid=${!regionOk} data-testid="stream-region-corners"
          onInput=${(e: Event) => setCorners((e.target as HTMLInputElement).value)} />
      </label>
      ${regionOk ? null : html`<p class="hint" data-testid="stream-region-problem">${regionId.trim() === '' ? 'Give the region an id.' : 'Give 3 or more corners, each x,y between 0 and 1.'}</p>`}
    </fieldset>
    <label>Task id (optional)
      <input name="taskId" value=${taskId} maxLength=${128} disabled=${busy} placeholder="generated when empty" data-testid="stream-task-id"
        onInput=${(e: Event) => setTaskId((e.target as HTMLInputElement).value)} />
    </label>
    <div class="row"><button type="submit" disabled=${busy || !complete} data-testid="stream-create">Start analysis</button></div>
    ${busy ? html`<p role="status" data-testid="stream-create-step">Creating the task (loading the model)…</p>` : null}
    <${ErrorPanel} error=${error} context="Start analysis" />
  </form>`
}
