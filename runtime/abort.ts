/** A signal that aborts when one of its sources does or when its timeout passes; `dispose()` when done. */
export interface Deadline {
  signal: AbortSignal
  dispose(): void
}

/**
 * `deadline(ms, request.signal)` is `AbortSignal.any([request.signal, AbortSignal.timeout(ms)])`
 * with strong references. On Node 20 the signal `AbortSignal.any` returns holds its sources
 * weakly: a garbage collection before the timeout fires loses the timeout signal, and the
 * combined signal never aborts (a server that stalls mid-body then holds the request for ever).
 * Here the timer keeps the controller alive until it fires or `dispose()` clears it.
 */
export function deadline(timeoutMs: number | undefined, ...sources: (AbortSignal | undefined)[]): Deadline {
  const controller = new AbortController()
  const listeners: [AbortSignal, () => void][] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const dispose = () => {
    clearTimeout(timer)
    for (const [source, listener] of listeners) source.removeEventListener('abort', listener)
    listeners.length = 0
  }
  const abort = (reason: unknown) => {
    dispose()
    controller.abort(reason)
  }
  for (const source of sources) {
    if (!source) continue
    if (source.aborted) {
      abort(source.reason)
      return { signal: controller.signal, dispose }
    }
    const listener = () => abort(source.reason)
    source.addEventListener('abort', listener, { once: true })
    listeners.push([source, listener])
  }
  if (timeoutMs !== undefined && timeoutMs > 0)
    timer = setTimeout(() => abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), timeoutMs)
  return { signal: controller.signal, dispose }
}
