import type { UploadSource } from './upload.ts'

/**
 * An upload source read no faster than `bytesPerSecond` on average (docs/deployment.md "Fleet
 * view", FLEET_PUSH_MAX_BYTES_PER_SECOND): each slice waits until the bytes before its end are
 * due since the first slice. The wait falls between two chunks, so the caller keeps each chunk
 * small enough that the device's upload session is never idle for long (`throttledChunkSize`).
 */
export function throttled(source: UploadSource, bytesPerSecond: number, now: () => number = () => performance.now()): UploadSource {
  let first: { at: number; offset: number } | null = null
  return {
    name: source.name,
    size: source.size,
    async slice(start, end) {
      first ??= { at: now(), offset: start }
      // A resumed upload may go back to an earlier offset: it is never made to wait more than its own bytes.
      const dueAt = first.at + (1000 * Math.max(0, start - first.offset)) / bytesPerSecond
      const wait = dueAt - now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      return source.slice(start, end)
    },
  }
}

/**
 * The chunk size of a throttled upload: one second of bytes, and never more than a quarter of
 * the device's idle timeout of an upload session (spec 3.1, uploadCapabilities.idleTimeoutMs),
 * so the session stays alive however slow the push; at least 1 KiB.
 */
export function throttledChunkSize(bytesPerSecond: number, idleTimeoutMs: number): number {
  const seconds = idleTimeoutMs > 0 ? Math.min(1, idleTimeoutMs / 4000) : 1
  return Math.max(1024, Math.floor(bytesPerSecond * seconds))
}
