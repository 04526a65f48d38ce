import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { Session } from '../../client/types.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'

/** Sign-in (spec 4.1): the password leaves the browser only as its MD5 digest. */
export function SignIn({ client, notice, onSignedIn }: { client: DeviceClient; notice: string | null; onSignedIn: (session: Session, password: string) => void }) {
  const [account, setAccount] = useState('admin')
  const [password, setPassword] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const session = await client.login(account, password)
      onSignedIn(session, password)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  return html`<main class="narrow" id="main">
    <h1 tabindex="-1">Sign in</h1>
    ${notice ? html`<p class="notice" role="status" data-testid="notice">${notice}</p>` : null}
    <form onSubmit=${submit} class="stack">
      <label>Account<input name="account" autocomplete="username" required value=${account} onInput=${(e: Event) => setAccount((e.target as HTMLInputElement).value)} /></label>
      <label>Password<input name="password" type="password" autocomplete="current-password" required value=${password} onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} /></label>
      <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
    <${ErrorPanel} error=${error} />
    <p class="hint">The password is sent as its MD5 digest, which gives no transport security: use HTTPS or a protected management network.</p>
  </main>`
}
