import { html } from 'htm/preact'
import { useEffect, useRef } from 'preact/hooks'

/**
 * A modal confirmation (native <dialog>: focus stays inside, Escape cancels). Focus starts on
 * the safe choice; the caller decides where focus goes afterwards.
 */
export function ConfirmDialog({ title, confirmLabel, busy, onConfirm, onCancel, children }: {
  title: string
  confirmLabel: string
  busy?: boolean
  onConfirm: () => void
  onCancel: () => void
  children?: unknown
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    dialog.current?.showModal()
    return () => dialog.current?.close()
  }, [])
  return html`<dialog ref=${dialog} class="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-text"
    onCancel=${(e: Event) => { e.preventDefault(); if (!busy) onCancel() }}>
    <h2 id="confirm-title">${title}</h2>
    <div id="confirm-text">${children}</div>
    <div class="row">
      <button type="button" class="danger" disabled=${busy} onClick=${onConfirm}>${busy ? 'Working…' : confirmLabel}</button>
      <button type="button" class="secondary" disabled=${busy} autofocus onClick=${onCancel}>Cancel</button>
    </div>
  </dialog>`
}
