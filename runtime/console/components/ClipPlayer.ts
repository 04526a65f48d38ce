import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { DeviceError } from '../../client/errors.ts'
import { ErrorPanel } from './ErrorPanel.ts'

/** The wait an alarm's clip still being recorded asks for (ClipNotReady), else null. */
const notReadyWait = (e: unknown) => (e instanceof DeviceError && e.messageKey === 'api.error.ClipNotReady' ? e.item?.retryAfterSeconds ?? 1 : null)

/**
 * An event's clip (docs/events.md "Event endpoints" `clipUrl`), played in the page on request.
 * A <video> sends no mtk: the clip is fetched with it, then played from memory. An alarm's clip
 * is announced before its post-roll is recorded: fetched again after the wait the device asks.
 */
export function ClipPlayer({ client, clipUrl, label, testId = 'event' }: { client: DeviceClient; clipUrl: string; label: string; testId?: string }) {
  const [clip, setClip] = useState<{ url: string | null; error: unknown; loading: boolean; recording: boolean }>({ url: null, error: null, loading: false, recording: false })
  const shown = useRef(true)
  useEffect(() => () => { shown.current = false }, [])
  useEffect(() => () => { if (clip.url) URL.revokeObjectURL(clip.url) }, [clip.url])
  const play = async () => {
    setClip({ url: null, error: null, loading: true, recording: false })
    while (shown.current) {
      try {
        const blob = await client.picture(clipUrl)
        if (shown.current) setClip({ url: URL.createObjectURL(blob), error: null, loading: false, recording: false })
        return
      } catch (e) {
        const wait = notReadyWait(e)
        if (!shown.current) return
        if (wait === null) return void setClip({ url: null, error: e, loading: false, recording: false })
        setClip({ url: null, error: null, loading: true, recording: true })
        await new Promise((resolve) => setTimeout(resolve, wait * 1000))
      }
    }
  }
  return html`${!clip.url ? html`<div><button type="button" class="secondary" disabled=${clip.loading} onClick=${play} data-testid=${`${testId}-play`}>${clip.loading ? 'Loading clip…' : 'Play clip'}</button></div>` : null}
    ${clip.recording ? html`<p class="hint" role="status" data-testid=${`${testId}-clip-recording`}>The clip is still being recorded; it plays once its last seconds are written.</p>` : null}
    ${clip.url ? html`<video src=${clip.url} controls autoplay muted playsinline class="clip" data-testid=${`${testId}-clip`} aria-label=${`Clip: ${label}`}></video>` : null}
    <${ErrorPanel} error=${clip.error} context="Clip" />`
}
