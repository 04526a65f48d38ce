import { h, type ComponentType } from 'preact'
import { html } from 'htm/preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ErrorPanel } from './components/ErrorPanel.ts'

/**
 * A view loaded on first use, from its own chunk (runtime/console/step.mjs splits them), so the
 * console's first load stays small. A failed load is shown and tried again on the next visit.
 * A `page` stands in with its own <main> while it loads: the focus the app gives a new page's
 * heading (app.ts) moves on to the real heading once the page is there.
 */
export function lazy<P extends object>(load: () => Promise<ComponentType<P>>, { page = false } = {}): ComponentType<P> {
  let loaded: ComponentType<P> | null = null
  let pending: Promise<ComponentType<P>> | null = null
  return function Lazy(props: P) {
    const [, setReady] = useState(false)
    const [error, setError] = useState<unknown>(null)
    const standIn = useRef<HTMLHeadingElement>(null)
    const refocus = useRef(false)
    useEffect(() => {
      if (loaded) return
      pending ??= load()
      pending.then((view) => {
        loaded = view
        refocus.current = !!standIn.current && document.activeElement === standIn.current
        setReady(true)
      }, (e) => { pending = null; setError(e) })
    }, [])
    useEffect(() => {
      if (!loaded || !refocus.current) return
      refocus.current = false
      document.querySelector<HTMLElement>('main h1')?.focus()
    })
    if (loaded) return h(loaded, props)
    const shown = error ? html`<${ErrorPanel} error=${error} context="Loading this part of the console" />` : html`<p class="hint">Loading…</p>`
    return page ? html`<main id="main"><h1 tabindex="-1" ref=${standIn}>Loading…</h1>${shown}</main>` : shown
  }
}
