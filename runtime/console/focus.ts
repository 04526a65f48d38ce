import { useEffect, useRef } from 'preact/hooks'

/**
 * Focus for when a dialog has closed (a modal dialog keeps focus inside while open, and the row
 * that opened it may be gone): `later()` gives `target` the focus once `open` turns false.
 */
export function useFocusAfter<T extends HTMLElement>(open: boolean) {
  const target = useRef<T>(null)
  const pending = useRef(false)
  useEffect(() => {
    if (open || !pending.current) return
    pending.current = false
    target.current?.focus()
  }, [open])
  return { target, later: () => { pending.current = true } }
}
