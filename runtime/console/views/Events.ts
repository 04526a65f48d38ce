import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { DeviceEvent } from '../../client/types.ts'
import { LIVE_TEXT, useLiveEvents } from '../live-events.ts'

const MAX_SHOWN = 50

/**
 * Live events from the device's WebSocket listener (spec 6), authenticated with the session's
 * mtk; reconnects from the last seen event id.
 */
export function Events({ client }: { client: DeviceClient }) {
  const [events, setEvents] = useState<DeviceEvent[]>([])
  const state = useLiveEvents(client, { onEvent: (event) => setEvents((list) => [event, ...list].slice(0, MAX_SHOWN)) })
  return html`<section class="panel events" aria-labelledby="events">
    <h2 id="events">Live events <span class=${`badge ${state}`} data-testid="events-state">${LIVE_TEXT[state]}</span></h2>
    ${events.length === 0 ? html`<p class="hint">No events since this page opened.</p>` : html`<ol class="event-list" aria-live="polite">
      ${events.map((e) => html`<li><time>${new Date(e.time).toLocaleTimeString()}</time> <code>${e.kind}</code> <span class="hint">${e.source}</span>
        <div class="payload">${JSON.stringify(e.payload)}</div></li>`)}
    </ol>`}
  </section>`
}
