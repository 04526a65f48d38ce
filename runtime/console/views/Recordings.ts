import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { PolicyView } from '../../../shared/alarms/types.ts'
import { CLIP_LIMITS } from '../../../shared/alarms/limits.ts'
import { DEFAULT_POST_ROLL_SECONDS, DEFAULT_PRE_ROLL_SECONDS } from '../../../shared/recording/limits.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { RecordingTimeline } from '../components/RecordingTimeline.ts'
import { formatBytes } from '../messages.ts'
import { useNames, type Names } from '../names.ts'
import { rollsText, type Rolls } from '../timeline.ts'

interface Camera { cameraId: string; cameraName: string; sourceType: string }
interface CameraRecord { cameraId: string; mode: 'off' | 'events' | 'continuous'; preRollSeconds: number; postRollSeconds: number; state: string }
interface RecordParam {
  retentionDays: number
  budgetBytes: string
  usage: { clips: number; clipBytes: string; availableForRecordingBytes: string }
  cameras: CameraRecord[]
}
interface Clip { clipId: string; cameraId: string; kind: string; eventKind: string | null; startTime: number; durationMs: number; bytes: number }

const MODES = { off: 'Off', events: 'Event clips', continuous: 'Continuous' } as const
const MB = 1024 * 1024

/** The rolls of a policy's clip action (its own, or the action's defaults), null without one. */
export function policyClipRolls(policy: PolicyView | undefined): Rolls | null {
  const clip = policy?.actions.find((a) => a.type === 'clip')
  if (!clip || clip.type !== 'clip') return null
  return { preRollSeconds: clip.preRollS ?? CLIP_LIMITS.defaultPreRollS, postRollSeconds: clip.postRollS ?? CLIP_LIMITS.defaultPostRollS }
}

/** The alarm policies with a clip action that watch a camera (by camera, by one of its tasks, or any task). */
export function clipPoliciesOf(names: Names, cameraId: string): { policy: PolicyView; rolls: Rolls }[] {
  return names.policies.flatMap((policy) => {
    const rolls = policyClipRolls(policy)
    const c = policy.conditions
    const watches = c.taskId ? names.tasks.find((t) => t.taskId === c.taskId)?.cameraId === cameraId : c.cameraId ? c.cameraId === cameraId : true
    return rolls && watches ? [{ policy, rolls }] : []
  })
}

/**
 * The rolls that apply to a camera's clips, in words (docs/recording-and-live-view.md "Recording"):
 * the camera's own for visits and alarms, each policy's clip action's for its alarms.
 */
export function RollsText({ names, record }: { names: Names; record: CameraRecord }) {
  if (record.mode === 'off') return html`<span>No clips.</span>`
  const policies = clipPoliciesOf(names, record.cameraId)
  return html`<span data-testid="record-rolls">An object's clip: from ${record.preRollSeconds} s before it entered to ${record.postRollSeconds} s after it left;
    an alarm without a clip action: ${rollsText(record)}${policies.map(({ policy, rolls }) => html`; alarms of “${policy.policyName}”: ${rollsText(rolls)} (its clip action)`)}.
    Alarms on an object extend its clip (one clip per object).</span>`
}

/**
 * Recording (spec 4.10 System: recording): each camera's mode and rolls, retention, and the
 * recorded clips, played in the page (a playback link: a <video> cannot send the mtk).
 */
export function Recordings({ client }: { client: DeviceClient }) {
  const [cameras, setCameras] = useState<Camera[]>([])
  const [param, setParam] = useState<RecordParam | null>(null)
  const [clips, setClips] = useState<{ total: number; rows: Clip[] } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [playing, setPlaying] = useState<{ clip: Clip; url: string } | null>(null)
  const names = Object.fromEntries(cameras.map((c) => [c.cameraId, c.cameraName]))
  const lists = useNames(client)

  const load = () => Promise.all([
    client.call<{ rows: Camera[] }>('/gtw/cwai/Camera/page', { pageNum: 1, pageSize: 100 }).then((p) => setCameras(p.rows)),
    client.call<RecordParam>('/gtw/cwai/System/QueryRecordParam', {}).then(setParam),
    client.call<{ total: number; rows: Clip[] }>('/gtw/cwai/System/RecordClipPage', { pageNum: 1, pageSize: 50 }).then(setClips),
  ]).then(() => setError(null), setError)
  useEffect(() => { void load() }, [])

  const save = async (body: Record<string, unknown>) => {
    try {
      setParam(await client.call<RecordParam>('/gtw/cwai/System/SetRecordParam', body))
      setError(null)
    } catch (e) {
      setError(e)
    }
  }
  const play = async (clip: Clip) => {
    try {
      const link = await client.call<{ url: string }>('/gtw/cwai/File/ClipPlayUrl', { id: clip.clipId })
      setPlaying({ clip, url: link.url })
    } catch (e) {
      setError(e)
    }
  }
  const recordOf = (cameraId: string): CameraRecord => param?.cameras.find((c) => c.cameraId === cameraId) ?? { cameraId, mode: 'off', preRollSeconds: DEFAULT_PRE_ROLL_SECONDS, postRollSeconds: DEFAULT_POST_ROLL_SECONDS, state: 'off' }

  return html`<main class="recordings" id="main">
    <h1 tabindex="-1">Recordings</h1>
    <${ErrorPanel} error=${error} />
    ${playing ? html`<section class="panel" aria-labelledby="playing">
      <h2 id="playing">${names[playing.clip.cameraId] ?? playing.clip.cameraId}, ${new Date(playing.clip.startTime).toLocaleString()}</h2>
      <video src=${playing.url} controls autoplay muted playsinline class="clip" data-testid="clip-video"></video>
      <p><button type="button" class="secondary" onClick=${() => setPlaying(null)}>Close</button></p>
    </section>` : null}
    <${RecordingTimeline} client=${client} names=${lists} rollsOf=${(cameraId: string) => recordOf(cameraId)}
      policyRolls=${(policyId: string) => policyClipRolls(lists.policies.find((p) => p.policyId === policyId))} />
    <div class="grid">
      <section class="panel" aria-labelledby="record-settings">
        <h2 id="record-settings">Cameras</h2>
        ${param ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Recording per camera (scrolls)"><table class="cards">
          <thead><tr><th scope="col">Camera</th><th scope="col">Recording</th><th scope="col">Before (s)</th><th scope="col">After (s)</th><th scope="col">State</th><th scope="col">Clips hold</th></tr></thead>
          <tbody>${cameras.map((camera) => {
            const record = recordOf(camera.cameraId)
            const set = (patch: Partial<CameraRecord>) => save({ cameras: [{ cameraId: camera.cameraId, mode: record.mode, preRollSeconds: record.preRollSeconds, postRollSeconds: record.postRollSeconds, ...patch }] })
            return html`<tr data-testid="record-camera" data-camera=${camera.cameraId}>
              <th scope="row" data-label="Camera">${camera.cameraName}</th>
              <td data-label="Recording"><select aria-label=${`Recording of ${camera.cameraName}`} value=${record.mode} onChange=${(e: Event) => set({ mode: (e.target as HTMLSelectElement).value as CameraRecord['mode'] })} data-testid="record-mode">
                ${Object.entries(MODES).map(([value, text]) => html`<option value=${value}>${text}</option>`)}</select></td>
              <td data-label="Before (s)"><input type="number" min="0" max="60" aria-label=${`Seconds before the event, ${camera.cameraName}`} value=${record.preRollSeconds} onChange=${(e: Event) => set({ preRollSeconds: Number((e.target as HTMLInputElement).value) })} /></td>
              <td data-label="After (s)"><input type="number" min="0" max="300" aria-label=${`Seconds after the event, ${camera.cameraName}`} value=${record.postRollSeconds} onChange=${(e: Event) => set({ postRollSeconds: Number((e.target as HTMLInputElement).value) })} /></td>
              <td data-label="State">${record.state}</td>
              <td data-label="Clips hold"><${RollsText} names=${lists} record=${record} /></td></tr>`
          })}</tbody></table></div>
          <div class="filters">
            <label>Keep clips (days, 0: no limit)<input type="number" min="0" max="3650" value=${param.retentionDays} onChange=${(e: Event) => save({ retentionDays: Number((e.target as HTMLInputElement).value) })} data-testid="retention-days" /></label>
            <label>Space for recordings (MB, 0: up to the disk reserve)<input type="number" min="0" value=${Math.round(Number(param.budgetBytes) / MB)} onChange=${(e: Event) => save({ budgetBytes: String(Math.round(Number((e.target as HTMLInputElement).value) * MB)) })} data-testid="budget" /></label>
          </div>
          <p class="hint">${param.usage.clips} clip(s), ${formatBytes(Number(param.usage.clipBytes), true)}; ${formatBytes(Number(param.usage.availableForRecordingBytes), true)} free above the disk reserve.</p>` : html`<p class="hint">Loading…</p>`}
      </section>
      <section class="panel" aria-labelledby="clips">
        <h2 id="clips">Clips <button type="button" class="link" onClick=${() => void load()}>Refresh</button></h2>
        ${clips === null ? html`<p class="hint">Loading…</p>` : clips.rows.length === 0 ? html`<p class="hint">No clips yet.</p>` : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Clips (scrolls)"><table class="cards">
          <thead><tr><th scope="col">When</th><th scope="col">Camera</th><th scope="col">What</th><th scope="col">Length</th><th scope="col">Size</th><th scope="col"><span class="sr-only">Play</span></th></tr></thead>
          <tbody>${clips.rows.map((clip) => html`<tr data-testid="clip-row">
            <th scope="row" data-label="When">${new Date(clip.startTime).toLocaleString()}</th>
            <td data-label="Camera">${names[clip.cameraId] ?? clip.cameraId}</td>
            <td data-label="What">${clip.kind === 'continuous' ? 'Continuous' : clip.eventKind ?? 'Event'}</td>
            <td data-label="Length">${Math.round(clip.durationMs / 1000)} s</td>
            <td data-label="Size">${formatBytes(clip.bytes, true)}</td>
            <td><button type="button" onClick=${() => void play(clip)} data-testid="clip-play">Play</button></td></tr>`)}</tbody>
        </table></div>`}
      </section>
    </div>
  </main>`
}
