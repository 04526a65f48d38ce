import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { CameraView, StreamTaskStatus } from '../../client/types.ts'
import { ConfirmDialog } from '../components/ConfirmDialog.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { useFocusAfter } from '../focus.ts'
import { MESSAGE_TEXT } from '../messages.ts'
import { StreamTaskDetail, stateText } from './StreamTaskDetail.ts'
import { StreamTaskForm } from './StreamTaskForm.ts'

const REFRESH_MS = 3000
type Batch = 'start' | 'stop' | 'delete'
const DONE: Record<Batch, string> = { start: 'Started', stop: 'Stopped', delete: 'Deleted' }

/**
 * Stream tasks (spec 4.9, 4.10 Task; docs/cameras-and-stream-tasks.md "Stream tasks"): the list with state and rates,
 * start / stop (switch), delete, the same for several at once (Task/batch), the form that
 * starts one, and one task's run details with its events.
 */
/** A task by its name (TaskCreate `taskName`), else its id. */
const nameOf = (t: StreamTaskStatus) => t.taskName ?? t.taskId

export function StreamTasks({ client, cameraId, algorithm }: { client: DeviceClient; cameraId: string | null; algorithm: string | null }) {
  const [rows, setRows] = useState<StreamTaskStatus[] | null>(null)
  const [cameras, setCameras] = useState<CameraView[] | null>(null)
  const [listError, setListError] = useState<unknown>(null)
  const [selected, setSelected] = useState<string[]>([])
  const [open, setOpen] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState<string | null>(null)
  const [error, setError] = useState<Failure | null>(null)
  const [deleting, setDeleting] = useState<string[] | null>(null)
  const listFocus = useFocusAfter<HTMLHeadingElement>(!!deleting)

  const load = () => client.polling.streamTaskPage(cameraId ? { cameraId } : {}).then((page) => { setRows(page.rows); setListError(null) }, setListError)
  useEffect(() => {
    load()
    client.cameraPage({ pageSize: 500 }).then((page) => setCameras(page.rows), setListError)
    const timer = setInterval(load, REFRESH_MS)
    return () => clearInterval(timer)
  }, [cameraId])

  const cameraName = (id: string) => cameras?.find((c) => c.cameraId === id)?.cameraName ?? id
  const shown = rows && algorithm ? rows.filter((t) => t.algorithmCode === algorithm) : rows
  const visible = new Set(shown?.map((t) => t.taskId))
  const chosen = selected.filter((id) => visible.has(id))

  /** One call at a time; the list is read again before the outcome shows, whatever happened. */
  const act = async (context: string, work: () => Promise<string>) => {
    if (busy) return
    setBusy(true)
    setError(null)
    setNotice(null)
    let message: string | null = null
    try {
      message = await work()
    } catch (e) {
      setError({ error: e, context })
    }
    await load()
    setNotice(message)
    setBusy(false)
  }
  const toggle = (t: StreamTaskStatus) => act(`${t.enabled ? 'Stop' : 'Start'} ${nameOf(t)}`, async () => {
    await client.streamTaskSwitch(t.taskId, !t.enabled)
    return `${t.enabled ? 'Stopped' : 'Started'} task ${nameOf(t)}.`
  })
  const batch = (action: Batch, taskIds: string[]) => act(`${DONE[action]} tasks`, async () => {
    const { rows: outcome } = await client.streamTaskBatch(action, taskIds)
    const failed = outcome.filter((r) => !r.ok)
    if (action === 'delete') {
      setSelected((s) => s.filter((id) => !taskIds.includes(id)))
      if (open && taskIds.includes(open)) setOpen(null)
    }
    const done = `${DONE[action]} ${outcome.length - failed.length} of ${outcome.length} task${outcome.length === 1 ? '' : 's'}.`
    return failed.length ? `${done} Not done: ${failed.map((r) => `${r.taskId} (${MESSAGE_TEXT[r.messageKey ?? ''] ?? r.messageKey})`).join(', ')}` : done
  })
  const confirmDelete = async () => {
    await batch('delete', deleting!)
    // The rows are gone: focus goes to the list once the dialog has closed.
    listFocus.later()
    setDeleting(null)
  }

  const allChosen = !!shown?.length && chosen.length === shown.length
  const filter = cameraId ? `the camera ${cameraName(cameraId)}` : algorithm ? html`<code>${algorithm}</code>` : null
  return html`<section class="panel stack" aria-labelledby="stream-list-heading">
    <h2 id="stream-list-heading" tabindex="-1" ref=${listFocus.target}>Stream tasks${shown ? html` <span class="badge" data-testid="stream-task-count">${shown.length}</span>` : null}</h2>
    <p class="hint">A stream task analyses one camera continuously; its events (an object entered, left) arrive live below when you open its details.</p>
    ${filter ? html`<p data-testid="stream-filter">Showing the stream tasks of ${filter}. <a href="#/tasks">Show all</a></p>` : null}
    <${ErrorPanel} error=${listError} context="Stream task list" />
    ${notice ? html`<p class="notice" role="status" data-testid="stream-notice">${notice}</p>` : null}
    <${ErrorPanel} ...${error} />
    ${rows === null && !listError ? html`<p class="hint">Loading…</p>` : null}
    ${shown?.length === 0 ? html`<p data-testid="no-stream-tasks">No stream tasks.</p>` : null}
    ${shown?.length ? html`
      <div class="row" role="group" aria-label="Selected stream tasks">
        <button type="button" class="secondary" aria-disabled=${busy || !chosen.length} onClick=${() => chosen.length && batch('start', chosen)}>Start selected</button>
        <button type="button" class="secondary" aria-disabled=${busy || !chosen.length} onClick=${() => chosen.length && batch('stop', chosen)}>Stop selected</button>
        <button type="button" class="danger-outline" aria-disabled=${busy || !chosen.length} onClick=${() => chosen.length && !busy && setDeleting(chosen)}>Delete selected</button>
      </div>
      <div class="table-wrap"><table class="cards" data-testid="stream-tasks">
        <caption class="sr-only">Stream tasks with their state and rates</caption>
        <thead><tr>
          <th scope="col"><input type="checkbox" aria-label="Select all stream tasks" checked=${allChosen}
            onChange=${() => setSelected(allChosen ? [] : shown.map((t) => t.taskId))} /><span class="sr-only">Select</span></th>
          <th scope="col">Task</th><th scope="col">Camera</th><th scope="col">Algorithm</th><th scope="col">State</th><th scope="col">Processed</th><th scope="col">Tracked</th><th scope="col"><span class="sr-only">Actions</span></th>
        </tr></thead>
        <tbody>${shown.map((t) => html`<tr key=${t.taskId} data-task-id=${t.taskId} class=${open === t.taskId ? 'current' : undefined}>
          <td><input type="checkbox" aria-label=${`Select ${nameOf(t)}`} checked=${chosen.includes(t.taskId)}
            onChange=${() => setSelected((s) => (s.includes(t.taskId) ? s.filter((id) => id !== t.taskId) : [...s, t.taskId]))} /></td>
          <th scope="row" data-label="Task"><span data-testid="stream-task-name">${nameOf(t)}</span>${t.taskName ? html`<br /><code class="wrap hint">${t.taskId}</code>` : null}</th>
          <td data-label="Camera">${cameraName(t.cameraId)}</td>
          <td data-label="Algorithm"><code>${t.algorithmCode}</code></td>
          <td class="wrap" data-label="State" data-testid="stream-state">${stateText(t)}${t.stateReason ? html` <span class="hint">(${t.stateReason})</span>` : null}</td>
          <td data-label="Processed" data-testid="stream-processed">${t.processedFps.toFixed(1)} of ${t.targetFps} fps</td>
          <td data-label="Tracked">${t.trackedObjects}</td>
          <td><div class="actions">
            <button type="button" class="secondary" aria-expanded=${open === t.taskId} aria-label=${`Details of ${nameOf(t)}`} onClick=${() => setOpen(open === t.taskId ? null : t.taskId)}>Details</button>
            <button type="button" class="secondary" aria-disabled=${busy} aria-label=${`${t.enabled ? 'Stop' : 'Start'} ${nameOf(t)}`} onClick=${() => toggle(t)}>${t.enabled ? 'Stop' : 'Start'}</button>
            <button type="button" class="danger-outline" aria-disabled=${busy} aria-label=${`Delete ${nameOf(t)}`} onClick=${() => !busy && setDeleting([t.taskId])}>Delete</button>
          </div></td>
        </tr>`)}</tbody>
      </table></div>` : null}
    ${open && rows?.some((t) => t.taskId === open) ? html`<${StreamTaskDetail} key=${open} client=${client} taskId=${open}
      taskName=${rows.find((t) => t.taskId === open)!.taskName} cameraName=${cameraName(rows.find((t) => t.taskId === open)!.cameraId)} onClose=${() => setOpen(null)} />` : null}
    <${StreamTaskForm} key=${cameraId ?? ''} client=${client} cameras=${cameras} cameraId=${cameraId} onCreated=${(taskId: string, taskName: string | null) => { setNotice(`Started task ${taskName ?? taskId}.`); setOpen(taskId); load() }} />
    ${deleting ? html`<${ConfirmDialog} title=${deleting.length === 1 ? `Delete ${deleting[0]}?` : `Delete ${deleting.length} stream tasks?`} confirmLabel="Delete" busy=${busy}
      onConfirm=${confirmDelete} onCancel=${() => setDeleting(null)}>
      <p>The analysis stops and the task${deleting.length === 1 ? ' is' : 's are'} removed; ${deleting.length === 1 ? 'its' : 'their'} stored events stay.</p>
    </${ConfirmDialog}>` : null}
  </section>`
}
