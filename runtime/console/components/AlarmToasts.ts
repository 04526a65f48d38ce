import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { DeviceEvent } from '../../client/types.ts'
import { alarmSound } from '../alarm-sound.ts'
import { useLiveEvents } from '../live-events.ts'
import { useNames } from '../names.ts'

/** How long a toast stays unless closed. */
const SHOWN_MS = 15_000
const MAX_SHOWN = 3

/**
 * A toast for every `alarm.raised` (docs/events.md "Kinds"), on whatever page is open, pushed
 * over the event WebSocket; with a beep when the operator switched the sound on (Review page).
 * The toast names the policy and camera and leads to the Review page.
 */
export function AlarmToasts({ client }: { client: DeviceClient }) {
  const names = useNames(client)
  const [toasts, setToasts] = useState<DeviceEvent[]>([])
  useLiveEvents(client, {
    kinds: ['alarm.raised'],
    onEvent: (event) => {
      setToasts((list) => [event, ...list.filter((t) => t.id !== event.id)].slice(0, MAX_SHOWN))
      alarmSound.play()
    },
  })
  useEffect(() => {
    if (!toasts.length) return
    const oldest = toasts[toasts.length - 1]!
    const timer = setTimeout(() => setToasts((list) => list.filter((t) => t.id !== oldest.id)), SHOWN_MS)
    return () => clearTimeout(timer)
  }, [toasts])
  const close = (id: number) => setToasts((list) => list.filter((t) => t.id !== id))
  return html`<div class="toasts" role="status" aria-live="assertive" data-testid="alarm-toasts">
    ${toasts.map((t) => {
      const p = t.payload
      const what = p.policyId ? names.policy(p.policyId, typeof p.policyName === 'string' ? p.policyName : null) : String(p.message ?? 'Alarm')
      const where = [p.label ? String(p.label) : '', p.cameraId ? `on ${names.camera(p.cameraId)}` : '', p.name && p.name !== 'unknown' ? `(${String(p.name)})` : ''].filter(Boolean).join(' ')
      return html`<div class="toast" data-testid="alarm-toast" data-alarm-id=${t.id}>
        <p><strong>Alarm: <span data-testid="alarm-toast-policy">${what}</span></strong> <span data-testid="alarm-toast-where">${where}</span> · <time>${new Date(t.time).toLocaleTimeString()}</time></p>
        <div class="row"><a href="#/review" onClick=${() => close(t.id)}>Review</a>
          <button type="button" class="link" aria-label=${`Close the alarm ${what}`} onClick=${() => close(t.id)}>Close</button></div>
      </div>`
    })}
  </div>`
}
