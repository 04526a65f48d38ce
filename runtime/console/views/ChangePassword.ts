import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { Session } from '../../client/types.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'

/** The console's rule: the device sees only the password's MD5 digest (spec 4.1), so it cannot count characters. */
const MIN_LENGTH = 8

/**
 * The forced password change (spec 5.7): business use waits until it is done. A change revokes
 * every session of the account (spec 5.5), so the console signs in again with the new password.
 */
export function ChangePassword({ client, account, currentPassword, forced, onChanged, onCancel }: {
  client: DeviceClient
  account: string
  currentPassword: string | null
  forced: boolean
  onChanged: (session: Session) => void
  onCancel: () => void
}) {
  const [oldPassword, setOldPassword] = useState(currentPassword ?? '')
  const [newPassword, setNewPassword] = useState('')
  const [repeat, setRepeat] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const mismatch = repeat !== '' && newPassword !== repeat

  const submit = async (event: Event) => {
    event.preventDefault()
    if (newPassword !== repeat) return
    setBusy(true)
    setError(null)
    try {
      await client.changePassword(oldPassword, newPassword)
      onChanged(await client.login(account, newPassword))
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  const input = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value)
  return html`<main class="narrow" id="main">
    <h1 tabindex="-1">Change password</h1>
    ${forced ? html`<p class="notice" role="status" data-testid="forced-change">The device requires a new password before it can be used.</p>` : null}
    <form onSubmit=${submit} class="stack">
      <label>Account<input name="username" autocomplete="username" readonly value=${account} /></label>
      ${currentPassword === null ? html`<label>Current password<input name="oldPassword" type="password" autocomplete="current-password" required value=${oldPassword} onInput=${input(setOldPassword)} /></label>` : null}
      <label>New password<input name="newPassword" type="password" autocomplete="new-password" required minLength=${MIN_LENGTH} value=${newPassword} onInput=${input(setNewPassword)} aria-describedby="password-rule" /></label>
      <p id="password-rule" class="hint" data-testid="password-rule">At least ${MIN_LENGTH} characters, different from the current password.</p>
      <label>Repeat new password<input name="repeatPassword" type="password" autocomplete="new-password" required value=${repeat} onInput=${input(setRepeat)} aria-invalid=${mismatch} aria-describedby="mismatch" /></label>
      ${mismatch ? html`<p id="mismatch" class="field-error">The passwords differ.</p>` : null}
      <div class="row">
        <button type="submit" disabled=${busy || mismatch}>${busy ? 'Changing…' : 'Change password'}</button>
        <button type="button" class="secondary" onClick=${onCancel}>${forced ? 'Sign out' : 'Cancel'}</button>
      </div>
    </form>
    <${ErrorPanel} error=${error} />
  </main>`
}
