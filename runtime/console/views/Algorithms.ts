import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { LayoutRow } from '../../client/types.ts'
import { ConfirmDialog } from '../components/ConfirmDialog.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { saveFile } from '../save-file.ts'
import { InstallPackage } from './InstallPackage.ts'

/** The pipeline in brief: its nodes' actions in order, e.g. detector → crop → classifier → logic. */
const chain = (row: LayoutRow) => row.nodes.map((n) => n.action).join(' → ')

/**
 * Algorithm management (spec 4.10): the algorithms with their pipelines, export of one as a
 * zip package, deletion (confirmed), and the install of a package.
 */
export function Algorithms({ client, account }: { client: DeviceClient; account: string }) {
  const [rows, setRows] = useState<LayoutRow[] | null>(null)
  const [listError, setListError] = useState<unknown>(null)
  const [busyId, setBusyId] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [error, setError] = useState<Failure | null>(null)
  const [confirming, setConfirming] = useState<LayoutRow | null>(null)
  // Where focus goes once the dialog is gone (a modal dialog keeps focus inside while open).
  const returnFocus = useRef<HTMLElement | null>(null)
  const focusAfterDialog = useRef<HTMLElement | null>(null)
  const tableHeading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    if (confirming || !focusAfterDialog.current) return
    focusAfterDialog.current.focus()
    focusAfterDialog.current = null
  }, [confirming])

  const load = () => client.algorithmLayoutList().then((page) => { setRows(page.rows); setListError(null) }, setListError)
  useEffect(() => { load() }, [])

  const exportOne = async (row: LayoutRow) => {
    if (busyId) return
    setBusyId(row.algorithmId)
    setError(null)
    setNotice(`Exporting ${row.algorithmId}…`)
    try {
      const file = await client.algorithmExport(row.algorithmId)
      saveFile(file)
      setNotice(`Exported ${row.algorithmId} as ${file.fileName}.`)
    } catch (e) {
      setNotice(null)
      setError({ error: e, context: `Export ${row.algorithmId}` })
    } finally {
      setBusyId(null)
    }
  }

  const askDelete = (row: LayoutRow, event: Event) => {
    if (busyId) return
    returnFocus.current = event.currentTarget as HTMLElement
    setError(null)
    setNotice(null)
    setConfirming(row)
  }
  const cancelDelete = () => {
    focusAfterDialog.current = returnFocus.current
    setConfirming(null)
  }
  const deleteConfirmed = async () => {
    const row = confirming!
    setBusyId(row.algorithmId)
    try {
      await client.algorithmDelete(row.algorithmId)
      setNotice(`Deleted ${row.algorithmId}.`)
      await load()
      // The row is gone: focus goes to the list it was in.
      focusAfterDialog.current = tableHeading.current
    } catch (e) {
      setError({ error: e, context: `Delete ${row.algorithmId}` })
      focusAfterDialog.current = returnFocus.current
    } finally {
      setBusyId(null)
      setConfirming(null)
    }
  }

  // Row buttons are aria-disabled, not disabled, while a call runs: a disabled button drops the keyboard focus.
  return html`<main class="algorithms" id="main">
    <h1 tabindex="-1">Algorithms</h1>
    <div class="stack">
      <section class="panel stack" aria-labelledby="algorithm-list-heading">
        <h2 id="algorithm-list-heading" tabindex="-1" ref=${tableHeading}>Installed algorithms${rows ? html` <span class="badge">${rows.length}</span>` : null}</h2>
        <${ErrorPanel} error=${listError} context="Algorithm list" />
        ${notice ? html`<p class="notice" role="status" data-testid="algorithms-notice">${notice}</p>` : null}
        <${ErrorPanel} ...${error} />
        ${rows === null && !listError ? html`<p class="hint">Loading…</p>` : null}
        ${rows ? html`<div class="table-wrap"><table class="cards" data-testid="algorithms">
          <caption class="sr-only">Algorithms on the device, with their pipelines</caption>
          <thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Version</th><th scope="col">Origin</th><th scope="col">Pipeline</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>${rows.map((row) => html`<tr key=${row.algorithmId} data-algorithm-id=${row.algorithmId}>
            <th scope="row" data-label="Id"><code class="wrap">${row.algorithmId}</code></th>
            <td class="wrap" data-label="Name">${row.algorithmName}</td>
            <td data-label="Version">${row.version}</td>
            <td data-testid="origin" data-label="Origin">${row.origin}</td>
            <td class="wrap" data-label="Pipeline" title=${row.nodes.map((n) => n.id).join(' → ')}>${chain(row)}</td>
            <td><div class="actions">
              <button type="button" class="secondary" aria-disabled=${busyId !== null} aria-label=${`Export ${row.algorithmId}`} onClick=${() => exportOne(row)}>Export</button>
              <button type="button" class="danger-outline" aria-disabled=${busyId !== null} aria-label=${`Delete ${row.algorithmId}`} onClick=${(e: Event) => askDelete(row, e)}>Delete</button>
            </div></td>
          </tr>`)}</tbody>
        </table></div>` : null}
      </section>
      <${InstallPackage} client=${client} account=${account} onInstalled=${() => { setNotice(null); load() }} />
    </div>
    ${confirming ? html`<${ConfirmDialog} title=${`Delete ${confirming.algorithmId}?`} confirmLabel="Delete" busy=${busyId === confirming.algorithmId}
      onConfirm=${deleteConfirmed} onCancel=${cancelDelete}>
      <p data-testid="delete-text"><strong>${confirming.algorithmName}</strong> (${confirming.origin}) is removed from the device. Tasks cannot use it afterwards.${' '}
        ${confirming.origin === 'preset' ? 'A shipped algorithm stays deleted across restarts until a package with its id is installed. ' : ''}Export it first to keep a copy.</p>
    </${ConfirmDialog}>` : null}
  </main>`
}
