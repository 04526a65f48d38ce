import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { CameraView, StreamTaskStatus } from '../../client/types.ts'
import { GalleryClient } from '../../client/galleries.ts'
import type { PolicyAction, PolicyConditions, PolicyView } from '../../../shared/alarms/types.ts'
import { CLIP_LIMITS, POLICY_LIMITS } from '../../../shared/alarms/limits.ts'
import type { AudioColumnView, AudioFileView } from '../../../shared/audio/types.ts'
import type { ScheduleView } from '../../../shared/schedules/types.ts'
import type { CameraRecordView } from '../../../shared/recording/types.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { regionChoices } from '../zones.ts'

const POLICY = '/gtw/cwai/AlarmStrage/'
/** What the editor needs to offer: the tasks, cameras, schedules and audio a policy can name. */
interface Choices { tasks: StreamTaskStatus[]; cameras: CameraView[]; schedules: ScheduleView[]; columns: AudioColumnView[]; files: AudioFileView[]; galleries: { galleryId: string; name: string }[]; records: CameraRecordView[] }

/** Recognition conditions (docs/alarms-and-schedules.md "Alarm policies"). */
const SEEN_TEXT = { watchList: 'a watch-list person seen', stranger: 'a stranger seen' }
const conditionsText = (c: PolicyConditions, choices: Choices) => [
  c.taskId ? `task ${choices.tasks.find((t) => t.taskId === c.taskId)?.taskName ?? c.taskId}` : c.cameraId ? `camera ${choices.cameras.find((x) => x.cameraId === c.cameraId)?.cameraName ?? c.cameraId}` : 'any task',
  c.label ? c.label : 'any object', c.areaId ? `in ${c.areaId}` : '', (c.minCount ?? 1) > 1 ? `at least ${c.minCount}` : '',
  c.minDwellS ? `for ${c.minDwellS} s` : '', c.logicResult ? 'logic node hit' : '', c.recognition ? SEEN_TEXT[c.recognition.seen] + (c.recognition.galleryIds ? ` of ${c.recognition.galleryIds.map((id) => choices.galleries.find((g) => g.galleryId === id)?.name ?? id).join(', ')}` : '') : '',
].filter(Boolean).join(', ')
const actionText = (a: PolicyView['actions'][number]) => a.type === 'webhook' ? `webhook ${a.url}` : a.type === 'mqtt' ? `MQTT ${a.topic}`
  : a.type === 'clip' ? `clip −${a.preRollS ?? CLIP_LIMITS.defaultPreRollS} s/+${a.postRollS ?? CLIP_LIMITS.defaultPostRollS} s` : `sound on column ${a.columnId}`

/**
 * The clip an alarm of this form gets, in words (docs/recording-and-live-view.md "Recording"):
 * the action's rolls when it records a clip, else the camera's own; one clip per object.
 */
function clipRollsText(form: { scope: string; clip: boolean; preRollS: string; postRollS: string }, choices: Choices): string {
  const cameraId = form.scope.startsWith('task:') ? choices.tasks.find((t) => `task:${t.taskId}` === form.scope)?.cameraId : form.scope.startsWith('camera:') ? form.scope.slice(7) : undefined
  const record = cameraId ? choices.records.find((r) => r.cameraId === cameraId) : undefined
  const cameraName = cameraId ? choices.cameras.find((c) => c.cameraId === cameraId)?.cameraName ?? cameraId : null
  const own = record && record.mode !== 'off' ? `${cameraName} records its own clips ${record.preRollSeconds} s before and ${record.postRollSeconds} s after` : null
  if (form.clip) {
    const where = !cameraName ? 'The camera of each alarm must record (Recordings page).'
      : own ? `${own}; the pre-roll reaches back at most as far as the camera keeps footage.` : `${cameraName} does not record: turn its recording on (Recordings page), or the alarm gets no clip.`
    return `Each alarm's clip: ${form.preRollS} s before and ${form.postRollS} s after the alarm (this policy's). ${where} An alarm on one object extends that object's clip (one clip per object).`
  }
  if (!cameraName) return 'Without "Record a clip", an alarm on a recording camera gets a clip with that camera\'s own seconds before and after (Recordings page).'
  return own ? `Without "Record a clip", an alarm gets the camera's clip: ${own}.` : `${cameraName} does not record: its alarms get no clip.`
}

/**
 * Alarm policies (spec 4.10 Linkage / alarm policy, docs/alarms-and-schedules.md "Alarm policies"): the list with its
 * on/off switches, and the editor: conditions on a task's objects and a schedule → actions.
 */
export function Policies({ client }: { client: DeviceClient }) {
  const [rows, setRows] = useState<PolicyView[] | null>(null)
  const [choices, setChoices] = useState<Choices>({ tasks: [], cameras: [], schedules: [], columns: [], files: [], galleries: [], records: [] })
  const [failure, setFailure] = useState<Failure | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [editing, setEditing] = useState<PolicyView | 'new' | null>(null)
  const page = <T>(route: string) => client.call<{ rows: T[] }>(route, { pageNum: 1, pageSize: 500 }).then((p) => p.rows, () => [] as T[])
  // A list read before the latest change (a switch shown at once) is not shown: it would flip the switch back.
  const generation = useRef(0)
  const load = () => {
    const asked = ++generation.current
    return client.call<{ rows: PolicyView[] }>(`${POLICY}page`, { pageNum: 1, pageSize: 500 })
      .then((p) => { if (asked === generation.current) setRows(p.rows) }, (e) => setFailure({ error: e, context: 'Policies' }))
  }
  useEffect(() => {
    load()
    Promise.all([
      client.streamTaskPage(), client.cameraPage({ pageSize: 500 }), page<ScheduleView>('/gtw/cwai/schedule/page'),
      page<AudioColumnView>('/gtw/cwai/Audio/AudioColumnPage'), page<AudioFileView>('/gtw/cwai/Audio/AudioFilePage'),
      new GalleryClient(client, 'face').galleries().then((p) => p.rows, () => []),
      client.call<{ cameras: CameraRecordView[] }>('/gtw/cwai/System/QueryRecordParam', {}).then((p) => p.cameras, () => [] as CameraRecordView[]),
    ]).then(([tasks, cameras, schedules, columns, files, galleries, records]) => setChoices({ tasks: tasks.rows, cameras: cameras.rows, schedules, columns, files, galleries, records }),
      (e) => setFailure({ error: e, context: 'Tasks and cameras' }))
  }, [])
  /** Does `work`, then shows the list as the device has it, whether the work was done or refused. */
  const act = async (context: string, work: () => Promise<string>) => {
    setFailure(null)
    try {
      setNotice(await work())
    } catch (e) {
      setFailure({ error: e, context })
    }
    await load()
  }
  // The switch shows its new position at once: re-rendered with the old one until the list is read again, it would flip back meanwhile.
  const switchPolicy = (p: PolicyView, on: boolean) => {
    generation.current++
    setRows((all) => all?.map((r) => (r.policyId === p.policyId ? { ...r, enabled: on } : r)) ?? all)
    return act(`Switch ${p.policyName}`, async () => { await client.call(`${POLICY}switch`, { policyIds: [p.policyId], enabled: on }); return `${p.policyName} is ${on ? 'on' : 'off'}.` })
  }
  const scheduleName = (id: string | null) => (id ? choices.schedules.find((s) => s.scheduleId === id)?.scheduleName ?? id : 'always')

  return html`<main class="policies" id="main">
    <h1 tabindex="-1">Alarm policies</h1>
    <div class="stack">
      <section class="panel stack" aria-labelledby="policy-list-heading">
        <h2 id="policy-list-heading">Policies</h2>
        ${notice ? html`<p class="notice" role="status" data-testid="policies-notice">${notice}</p>` : null}
        <${ErrorPanel} ...${failure} />
        ${rows?.length === 0 ? html`<p>No alarm policies yet.</p>` : null}
        ${rows?.length ? html`<div class="table-wrap"><table data-testid="policies">
          <caption class="sr-only">Alarm policies</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">When</th><th scope="col">Schedule</th><th scope="col">Actions</th><th scope="col">On</th><th scope="col"><span class="sr-only">Edit</span></th></tr></thead>
          <tbody>${rows.map((p) => html`<tr key=${p.policyId} data-policy-id=${p.policyId}>
            <th scope="row">${p.policyName}</th>
            <td class="wrap">${conditionsText(p.conditions, choices)}<div class="hint">cooldown ${p.cooldownS} s per object</div></td>
            <td>${scheduleName(p.scheduleId)}</td>
            <td class="wrap">${['alarm with snapshot', ...p.actions.map(actionText)].join(', ')}</td>
            <td><label class="check"><input type="checkbox" checked=${p.enabled} aria-label=${`${p.policyName} switched on`} data-testid="policy-enabled"
              onChange=${(e: Event) => switchPolicy(p, (e.target as HTMLInputElement).checked)} /></label></td>
            <td><div class="actions">
              <button type="button" class="secondary" aria-label=${`Edit ${p.policyName}`} onClick=${() => { setNotice(null); setEditing(p) }}>Edit</button>
              <button type="button" class="danger-outline" aria-label=${`Delete ${p.policyName}`}
                onClick=${() => act(`Delete ${p.policyName}`, async () => { await client.call(`${POLICY}delete`, { policyId: p.policyId }); return `Deleted the policy ${p.policyName}.` })}>Delete</button>
            </div></td>
          </tr>`)}</tbody>
        </table></div>` : null}
        ${editing ? null : html`<div class="row"><button type="button" onClick=${() => { setNotice(null); setEditing('new') }} data-testid="policy-new">New policy</button></div>`}
      </section>
      ${editing ? html`<${PolicyForm} key=${editing === 'new' ? 'new' : editing.policyId} client=${client} choices=${choices} policy=${editing === 'new' ? null : editing}
        onSaved=${(m: string) => { setEditing(null); setNotice(m); load() }} onCancel=${() => setEditing(null)} />` : null}
    </div>
  </main>`
}

function PolicyForm({ client, choices, policy, onSaved, onCancel }: { client: DeviceClient; choices: Choices; policy: PolicyView | null; onSaved: (m: string) => void; onCancel: () => void }) {
  const c = policy?.conditions ?? { label: 'person' }
  const find = <T extends PolicyAction['type']>(type: T) => policy?.actions.find((a) => a.type === type) as Extract<PolicyView['actions'][number], { type: T }> | undefined
  const [form, setForm] = useState({
    policyName: policy?.policyName ?? '', scope: c.taskId ? `task:${c.taskId}` : c.cameraId ? `camera:${c.cameraId}` : '',
    areaId: c.areaId ?? '', label: c.label ?? '', minCount: String(c.minCount ?? 1), minDwellS: String(c.minDwellS ?? 0), logicResult: !!c.logicResult,
    seen: c.recognition?.seen ?? '', seenGalleries: c.recognition?.galleryIds?.join(', ') ?? '',
    scheduleId: policy?.scheduleId ?? '', cooldownS: String(policy?.cooldownS ?? POLICY_LIMITS.defaultCooldownS),
    webhookUrl: find('webhook')?.url ?? '', webhookSecret: '', mqttTopic: find('mqtt')?.topic ?? '',
    clip: !!find('clip'), preRollS: String(find('clip')?.preRollS ?? CLIP_LIMITS.defaultPreRollS), postRollS: String(find('clip')?.postRollS ?? CLIP_LIMITS.defaultPostRollS),
    columnId: find('audio')?.columnId ?? '', audioId: find('audio')?.audioId ?? '',
  })
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const zones = regionChoices(form.scope, choices.tasks)
  const set = (key: keyof typeof form) => (e: Event) => {
    const target = e.target as HTMLInputElement
    setForm((f) => ({ ...f, [key]: target.type === 'checkbox' ? target.checked : target.value }))
  }
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    const [scopeKind, scopeId] = form.scope.split(/:(.*)/s)
    const galleryIds = form.seenGalleries.split(',').map((id) => id.trim()).filter(Boolean)
    const conditions: PolicyConditions = {
      ...(scopeKind === 'task' ? { taskId: scopeId } : scopeKind === 'camera' ? { cameraId: scopeId } : {}),
      ...(form.areaId.trim() ? { areaId: form.areaId.trim() } : {}), ...(form.label.trim() ? { label: form.label.trim() } : {}),
      minCount: Number(form.minCount), minDwellS: Number(form.minDwellS), ...(form.logicResult ? { logicResult: true } : {}),
      ...(form.seen ? { recognition: { seen: form.seen as 'watchList' | 'stranger', ...(form.seen === 'watchList' && galleryIds.length ? { galleryIds } : {}) } } : {}),
    }
    const actions: PolicyAction[] = [
      ...(form.webhookUrl.trim() ? [{ type: 'webhook' as const, url: form.webhookUrl.trim(), ...(form.webhookSecret ? { secret: form.webhookSecret } : {}) }] : []),
      ...(form.mqttTopic.trim() ? [{ type: 'mqtt' as const, topic: form.mqttTopic.trim() }] : []),
      ...(form.clip ? [{ type: 'clip' as const, preRollS: Number(form.preRollS), postRollS: Number(form.postRollS) }] : []),
      ...(form.columnId && form.audioId ? [{ type: 'audio' as const, columnId: form.columnId, audioId: form.audioId }] : []),
    ]
    const body = { policyName: form.policyName.trim(), conditions, scheduleId: form.scheduleId || null, cooldownS: Number(form.cooldownS), actions }
    try {
      if (policy) await client.call(`${POLICY}update`, { policyId: policy.policyId, ...body })
      else await client.call(`${POLICY}add`, body)
      onSaved(`${policy ? 'Saved' : 'Added'} the policy ${body.policyName}.`)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  const number = (key: keyof typeof form, label: string, min: number, max: number, hint?: string) => html`<label>${label}
    <input type="number" min=${min} max=${max} step="any" value=${form[key] as string} required onInput=${set(key)} data-testid=${`policy-${key}`} />
    ${hint ? html`<span class="hint">${hint}</span>` : null}</label>`
  const text = (key: keyof typeof form, label: string, extra: Record<string, unknown> = {}) => html`<label>${label}
    <input value=${form[key] as string} onInput=${set(key)} data-testid=${`policy-${key}`} ...${extra} /></label>`
  return html`<form class="panel stack" onSubmit=${submit} aria-busy=${busy} aria-labelledby="policy-form-heading" data-testid="policy-form">
    <h2 id="policy-form-heading">${policy ? `Edit ${policy.policyName}` : 'New alarm policy'}</h2>
    ${text('policyName', 'Name', { required: true, maxLength: 64 })}
    <fieldset class="stack"><legend>When</legend>
      <label>Task or camera<select value=${form.scope} onChange=${set('scope')} data-testid="policy-scope">
        <option value="">Any stream task</option>
        ${choices.tasks.map((t) => html`<option value=${`task:${t.taskId}`}>Task ${t.taskName ?? t.taskId}</option>`)}
        ${choices.cameras.map((x) => html`<option value=${`camera:${x.cameraId}`}>Camera ${x.cameraName}</option>`)}
      </select></label>
      ${text('label', 'Label (e.g. person; empty: any)', { maxLength: 64 })}
      <label>Zone<select value=${form.areaId} onChange=${set('areaId')} data-testid="policy-areaId" aria-describedby="policy-zone-hint">
        <option value="">Anywhere in the picture</option>
        ${zones.map((z) => html`<option value=${z.areaId}>${z.label}</option>`)}
        ${form.areaId && !zones.some((z) => z.areaId === form.areaId) ? html`<option value=${form.areaId}>${form.areaId} (not a zone of these tasks)</option>` : null}
      </select></label>
      <p class="hint" id="policy-zone-hint">The zones of the chosen task or camera (draw them under Tasks → Details → Zones).</p>
      ${number('minDwellS', 'For at least (seconds)', 0, 86_400)}
      ${number('minCount', 'At least this many objects at once', 1, 100, '1: one alarm per object')}
      <label class="check"><input type="checkbox" checked=${form.logicResult} onChange=${set('logicResult')} /> Only objects the pipeline's logic node flags</label>
      <label>Face recognition (a task with recognition)<select value=${form.seen} onChange=${set('seen')} data-testid="policy-seen">
        <option value="">Anyone</option>
        ${Object.entries(SEEN_TEXT).map(([value, text]) => html`<option value=${value}>${text[0]!.toUpperCase()}${text.slice(1)}</option>`)}
      </select></label>
      ${form.seen === 'watchList' ? text('seenGalleries', 'Of the face galleries (ids, comma-separated; empty: any the task searches)', { maxLength: 2100 }) : null}
      <label>Schedule<select value=${form.scheduleId} onChange=${set('scheduleId')} data-testid="policy-schedule">
        <option value="">Always</option>
        ${choices.schedules.map((s) => html`<option value=${s.scheduleId}>${s.scheduleName}</option>`)}
      </select></label>
      ${number('cooldownS', 'Cooldown per object (seconds)', 0, 86_400)}
    </fieldset>
    <fieldset class="stack"><legend>Then</legend>
      <p class="hint">Every alarm is recorded with its snapshot (events page, alarm export).</p>
      ${text('webhookUrl', 'Webhook URL (POST, empty: none)', { type: 'url', maxLength: 2048 })}
      ${form.webhookUrl ? text('webhookSecret', policy && find('webhook')?.secretSet ? 'Webhook secret (kept when empty)' : 'Webhook secret (optional)', { type: 'password', maxLength: 256, autocomplete: 'new-password' }) : null}
      ${text('mqttTopic', 'MQTT topic (empty: none)', { maxLength: 256 })}
      <label class="check"><input type="checkbox" checked=${form.clip} onChange=${set('clip')} data-testid="policy-clip" /> Record a clip</label>
      ${form.clip ? html`<div class="row">${number('preRollS', 'Seconds before', 0, 60)}${number('postRollS', 'Seconds after', 0, 300)}</div>` : null}
      <p class="hint" data-testid="policy-clip-rolls">${clipRollsText(form, choices)}</p>
      <div class="row">
        <label>Play on audio column<select value=${form.columnId} onChange=${set('columnId')}><option value="">None</option>
          ${choices.columns.map((x) => html`<option value=${x.columnId}>${x.columnName}</option>`)}</select></label>
        <label>Audio file<select value=${form.audioId} onChange=${set('audioId')}><option value="">None</option>
          ${choices.files.map((x) => html`<option value=${x.audioId}>${x.audioName}</option>`)}</select></label>
      </div>
    </fieldset>
    <div class="row">
      <button type="submit" disabled=${busy || !form.policyName.trim()} data-testid="policy-save">${policy ? 'Save' : 'Add policy'}</button>
      <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
    </div>
    <${ErrorPanel} error=${error} context="Save policy" />
  </form>`
}
