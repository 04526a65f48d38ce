import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { DEBUG_MARKER } from '../../client/detect.ts'
import type { TaskListRow } from '../../client/types.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import type { ConsoleTasks } from '../console-tasks.ts'
import { formatCount } from '../messages.ts'
import { localTime } from '../format.ts'
import { lazy } from '../lazy.ts'

const StreamTasks = lazy(() => import('./StreamTasks.ts').then((m) => m.StreamTasks))

const REFRESH_MS = 10_000

/** The task's last activity: its last detection, else its last change (created, reused). */
const lastActivity = (t: TaskListRow) => localTime(t.lastDetectionAt ?? t.updatedAt)

/**
 * Every created task on the device (spec 3.2: image tasks), with its algorithm, state and last
 * activity, and a cancel button: a created task holds its model and keeps its algorithm from
 * being deleted or replaced. Then the stream tasks (spec 4.9), alone when a camera is chosen.
 */
export function Tasks({ client, tasks, algorithm, camera }: { client: DeviceClient; tasks: ConsoleTasks; algorithm: string | null; camera: string | null }) {
  const [rows, setRows] = useState<TaskListRow[] | null>(null)
  const [listError, setListError] = useState<unknown>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [error, setError] = useState<Failure | null>(null)

  const load = () => client.polling.taskList().then((page) => { setRows(page.rows); setListError(null) }, setListError)
  useEffect(() => {
    load()
    const timer = setInterval(load, REFRESH_MS)
    return () => clearInterval(timer)
  }, [])

  const cancel = async (row: TaskListRow) => {
    if (busy) return
    setBusy(row.taskId)
    setError(null)
    setNotice(null)
    try {
      await client.taskCancel({ taskId: row.taskId, algorithmCode: row.algorithmCode, mvDebug: DEBUG_MARKER })
      tasks.forget(row.taskId)
      setNotice(`Cancelled task ${row.taskId}.`)
      await load()
    } catch (e) {
      setError({ error: e, context: `Cancel ${row.taskId}` })
    } finally {
      setBusy(null)
    }
  }

  const shown = rows && algorithm ? rows.filter((r) => r.algorithmCode === algorithm) : rows
  return html`<main class="tasks" id="main">
    <h1 tabindex="-1">Tasks</h1>
    <div class="stack">
    ${camera ? null : html`<section class="panel stack" aria-labelledby="task-list-heading">
      <h2 id="task-list-heading">Image-analysis tasks${shown ? html` <span class="badge" data-testid="task-count">${shown.length}</span>` : null}</h2>
      <p class="hint">A created task keeps its algorithm’s models loaded, and its algorithm cannot be deleted or replaced until it is cancelled.${' '}
        Tasks this browser tab created for the Detection page are cancelled when you leave that page.</p>
      ${algorithm ? html`<p>Showing the tasks of <code>${algorithm}</code>. <a href="#/tasks">Show all</a></p>` : null}
      <${ErrorPanel} error=${listError} context="Task list" />
      ${notice ? html`<p class="notice" role="status" data-testid="tasks-notice">${notice}</p>` : null}
      <${ErrorPanel} ...${error} />
      ${rows === null && !listError ? html`<p class="hint">Loading…</p>` : null}
      ${shown?.length === 0 ? html`<p data-testid="no-tasks">No created tasks.</p>` : null}
      ${shown?.length ? html`<div class="table-wrap"><table class="cards" data-testid="tasks">
        <caption class="sr-only">Created tasks</caption>
        <thead><tr><th scope="col">Task</th><th scope="col">Algorithm</th><th scope="col">State</th><th scope="col">Detections</th><th scope="col">Last activity</th><th scope="col">Created by</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>${shown.map((t) => html`<tr key=${t.taskId} data-task-id=${t.taskId}>
          <th scope="row" data-label="Task"><code class="wrap">${t.taskId}</code>${tasks.isOwn(t.taskId) ? html` <span class="badge">this tab</span>` : null}</th>
          <td data-label="Algorithm" data-testid="task-algorithm"><code>${t.algorithmCode}</code></td>
          <td data-label="State">${t.state === 'created' ? (t.loaded ? 'Created, model loaded' : 'Created, model not loaded') : 'Cancelled'}</td>
          <td data-label="Detections">${formatCount(t.detections)}${t.failures ? ` (${formatCount(t.failures)} failed)` : ''}</td>
          <td data-label="Last activity">${lastActivity(t)}</td>
          <td data-label="Created by">${t.createdByAccount ?? (t.createdBy ? 'another account' : 'the device')}</td>
          <td><button type="button" class="danger-outline" aria-disabled=${busy !== null} aria-label=${`Cancel task ${t.taskId}`} onClick=${() => cancel(t)}>${busy === t.taskId ? 'Cancelling…' : 'Cancel'}</button></td>
        </tr>`)}</tbody>
      </table></div>` : null}
    </section>`}
    <${StreamTasks} client=${client} cameraId=${camera} algorithm=${algorithm} />
    </div>
  </main>`
}
