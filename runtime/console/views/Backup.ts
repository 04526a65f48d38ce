import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import {
  BACKUP_UPLOAD_PURPOSE, backupStatus, createBackup, downloadBackup, factoryReset, requestFactoryReset, restartedWithoutSession, restoreBackup,
} from '../../client/backup.ts'
import type { DeviceClient } from '../../client/client.ts'
import type { UploadProgress } from '../../client/upload.ts'
import type { BackupStatus, FactoryResetChallenge } from '../../../shared/backup/types.ts'
import { ConfirmDialog } from '../components/ConfirmDialog.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { formatBytes } from '../messages.ts'
import { saveFile } from '../save-file.ts'
import { useSteps } from '../steps.ts'
import { uploadBrowserFile } from '../upload.ts'

const value = (e: Event) => (e.target as HTMLInputElement).value
const at = (ms: string) => new Date(Number(ms)).toLocaleString()

/**
 * Backup, restore and factory reset (docs/system.md "Backup, restore and factory reset"). A restore and
 * a factory reset restart the device and end this session: the page waits for the device and
 * then returns to sign-in with `onRestarted`'s notice.
 */
export function Backup({ client, account, onRestarted }: { client: DeviceClient; account: string; onRestarted: (notice: string) => void }) {
  const [status, setStatus] = useState<BackupStatus | null>(null)
  const [restarting, setRestarting] = useState<string | null>(null)
  const [restartError, setRestartError] = useState<unknown>(null)
  useEffect(() => { backupStatus(client).then(setStatus, () => undefined) }, [])

  /** The device restarts to apply a restore or a reset; sign-in follows once it is back. */
  const waitForRestart = async (what: string, notice: string) => {
    setRestarting(what)
    try {
      await restartedWithoutSession(client)
      onRestarted(notice)
    } catch (e) {
      setRestartError(e)
    }
  }

  const last = status?.last
  return html`<main class="backup" id="main">
    <h1 tabindex="-1">Backup and reset</h1>
    ${restarting ? html`<p class="notice" role="status" data-testid="restarting">${restarting} The device restarts; this page returns to sign-in when it is back.</p>` : null}
    <${ErrorPanel} error=${restartError} context="Restart" />
    ${last ? html`<p class=${last.outcome === 'restored' ? 'notice' : 'error'} data-testid="last-restore">
      Last restore (${at(last.at)}): ${last.outcome === 'restored' ? `the backup of ${at(last.backupCreatedAt)} was restored` : `failed, the device kept its data: ${last.reason}`}.</p>` : null}
    <div class="stack" inert=${restarting !== null}>
      <${CreateBackup} client=${client} />
      <${RestoreBackup} client=${client} account=${account}
        onStaged=${() => waitForRestart('The backup passed every check.', 'The device restored the backup. Sign in with an account of the backup.')} />
      <${FactoryReset} client=${client}
        onConfirmed=${() => waitForRestart('Factory reset confirmed.', 'The device was reset to its factory state. Sign in as admin with the first password.')} />
    </div>
  </main>`
}

function CreateBackup({ client }: { client: DeviceClient }) {
  const [passphrase, setPassphrase] = useState('')
  const [again, setAgain] = useState('')
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState<string | null>(null)
  const [error, setError] = useState<Failure | null>(null)
  const mismatch = again !== '' && again !== passphrase

  const submit = async (event: Event) => {
    event.preventDefault()
    if (mismatch || passphrase.length < 8) return
    setBusy(true)
    setError(null)
    setNotice('Writing the backup…')
    let context = 'Backup'
    try {
      const info = await createBackup(client, passphrase)
      context = 'Download'
      const file = await downloadBackup(client, info.backupId)
      saveFile(file)
      setNotice(`Saved ${file.fileName} (${formatBytes(Number(info.sizeBytes), true)}, ${Object.values(info.tables).reduce((a, b) => a + b, 0)} rows, ${info.files} files). Keep the passphrase: the backup cannot be restored without it.`)
      setPassphrase('')
      setAgain('')
    } catch (e) {
      setNotice(null)
      setError({ error: e, context })
    } finally {
      setBusy(false)
    }
  }

  return html`<form class="panel stack" onSubmit=${submit} aria-busy=${busy} aria-labelledby="backup-heading">
    <h2 id="backup-heading">Back up</h2>
    <p class="hint">Settings, accounts (password hashes), algorithms and layouts, models, face galleries, cameras and tasks. Not recordings, events or sign-in sessions.
      Camera and channel passwords are encrypted with the passphrase.</p>
    <label>Passphrase (at least 8 characters)
      <input type="password" autocomplete="new-password" minLength=${8} maxLength=${256} required value=${passphrase} disabled=${busy}
        data-testid="backup-passphrase" onInput=${(e: Event) => setPassphrase(value(e))} />
    </label>
    <label>Passphrase again
      <input type="password" autocomplete="new-password" required value=${again} disabled=${busy} aria-invalid=${mismatch} aria-describedby=${mismatch ? 'passphrase-mismatch' : undefined}
        data-testid="backup-passphrase-again" onInput=${(e: Event) => setAgain(value(e))} />
    </label>
    ${mismatch ? html`<p class="hint" id="passphrase-mismatch" data-testid="passphrase-mismatch">The passphrases differ.</p>` : null}
    <div class="row"><button type="submit" disabled=${busy || mismatch || passphrase.length < 8 || again !== passphrase} data-testid="create-backup">Create and download</button></div>
    ${notice ? html`<p class="notice" role="status" data-testid="backup-notice">${notice}</p>` : null}
    <${ErrorPanel} ...${error} />
  </form>`
}

function RestoreBackup({ client, account, onStaged }: { client: DeviceClient; account: string; onStaged: () => void }) {
  const [file, setFile] = useState<File | null>(null)
  const [passphrase, setPassphrase] = useState('')
  const [progress, setProgress] = useState<UploadProgress | null>(null)
  const { step, busy, failure: error, setFailure: setError, run } = useSteps<'upload' | 'check'>()
  // A refused backup leaves its upload usable: another passphrase is tried without uploading again.
  const uploaded = useRef<{ file: File; uploadId: string } | null>(null)

  const submit = (event: Event) => {
    event.preventDefault()
    if (!file) return
    void run(async (enter, signal) => {
      if (uploaded.current?.file !== file) {
        enter('upload', 'Upload')
        const uploadId = await uploadBrowserFile(client, account, file, BACKUP_UPLOAD_PURPOSE, { onProgress: setProgress, signal })
        uploaded.current = { file, uploadId }
      }
      enter('check', 'Restore')
      await restoreBackup(client, uploaded.current.uploadId, passphrase, { signal })
      onStaged()
    })
  }

  const percent = progress ? Math.round((progress.sentBytes / Math.max(1, progress.totalBytes)) * 100) : 0
  return html`<form class="panel stack" onSubmit=${submit} aria-busy=${busy} aria-labelledby="restore-heading">
    <h2 id="restore-heading">Restore</h2>
    <p class="hint">The device checks the whole backup first; a refused backup changes nothing. An accepted one replaces the device's data, the device restarts,
      and everyone signs in again with the accounts of the backup.</p>
    <label class="drop">
      <input type="file" class="sr-only" accept=".tar.gz,.tgz,application/gzip" disabled=${busy} data-testid="restore-file"
        onChange=${(e: Event) => { setFile((e.target as HTMLInputElement).files?.[0] ?? null); setError(null); setProgress(null) }} />
      <span>${file ? html`<strong data-testid="restore-name">${file.name}</strong> · ${formatBytes(file.size, true)}` : 'Choose a backup (.tar.gz)'}</span>
    </label>
    <label>Passphrase of the backup
      <input type="password" autocomplete="off" minLength=${8} maxLength=${256} required value=${passphrase} disabled=${busy}
        data-testid="restore-passphrase" onInput=${(e: Event) => setPassphrase(value(e))} />
    </label>
    <div class="row"><button type="submit" disabled=${busy || !file || passphrase.length < 8} data-testid="restore">Restore</button></div>
    ${busy ? html`<p role="status" data-testid="restore-step">${step === 'upload' ? 'Uploading…' : 'Checking the whole backup…'}</p>` : null}
    ${progress ? html`<div class="progress">
      <progress max="100" value=${percent} aria-label="Upload progress"></progress>
      <span>${percent}% · ${formatBytes(progress.sentBytes, true)} of ${formatBytes(progress.totalBytes, true)}</span>
    </div>` : null}
    <${ErrorPanel} ...${error} />
  </form>`
}

function FactoryReset({ client, onConfirmed }: { client: DeviceClient; onConfirmed: () => void }) {
  const [challenge, setChallenge] = useState<FactoryResetChallenge | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Failure | null>(null)
  const opener = useRef<HTMLButtonElement>(null)

  // Step 1: the device hands out a short-lived token; the dialog's confirmation sends it back.
  const ask = async () => {
    setError(null)
    try {
      setChallenge(await requestFactoryReset(client))
    } catch (e) {
      setError({ error: e, context: 'Factory reset' })
    }
  }
  const confirm = async () => {
    setBusy(true)
    try {
      await factoryReset(client, challenge!.confirmationToken)
      setChallenge(null)
      onConfirmed()
    } catch (e) {
      setChallenge(null)
      setError({ error: e, context: 'Factory reset' })
      opener.current?.focus()
    } finally {
      setBusy(false)
    }
  }

  return html`<section class="panel stack" aria-labelledby="reset-heading">
    <h2 id="reset-heading">Factory reset</h2>
    <p class="hint">Removes everything but the software: accounts, settings, algorithms you added, models, galleries, cameras, tasks, uploads, pictures and logs.
      The device comes back with the account admin and its first password. Create a backup first to keep a copy.</p>
    <div class="row"><button type="button" class="danger-outline" ref=${opener} onClick=${ask} data-testid="factory-reset">Factory reset…</button></div>
    <${ErrorPanel} ...${error} />
    ${challenge ? html`<${ConfirmDialog} title="Reset the device to its factory state?" confirmLabel="Reset the device" busy=${busy}
      onConfirm=${confirm} onCancel=${() => { setChallenge(null); opener.current?.focus() }}>
      <p data-testid="reset-text">Everything on the device but its software is removed, and it restarts. This cannot be undone.
        Confirm within ${challenge.expiresInSeconds} seconds.</p>
    </${ConfirmDialog}>` : null}
  </section>`
}
