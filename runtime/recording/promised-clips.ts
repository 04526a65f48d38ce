/**
 * Clips whose URL an alarm already carries (a policy's clip action) but that are not written
 * yet: asked for meanwhile they are "not ready, retry in n s" (ClipNotReady), not "not found".
 * A promise the recorder gives up on (no footage covers it, the camera stopped recording) is
 * settled at once; one that is somehow never settled is forgotten at its expiry.
 */
export class PromisedClips {
  private readonly promises = new Map<string, { readyAt: number; expiresAt: number }>()

  /** `readyAt`: when the clip should be written (its post-roll recorded); `expiresAt`: when to stop waiting for it. */
  promise(clipId: string, readyAt: number, expiresAt: number): void {
    this.promises.set(clipId, { readyAt, expiresAt })
  }

  /** The clip was written, or will not be. */
  settle(clipId: string): void {
    this.promises.delete(clipId)
  }

  /** Seconds to wait for a clip still promised at `now` (at least 1), else null. */
  retryAfterSeconds(clipId: string, now: number): number | null {
    const promise = this.promises.get(clipId)
    if (!promise || now >= promise.expiresAt) return null
    return Math.max(1, Math.ceil((promise.readyAt - now) / 1000))
  }

  /** Forgets promises past their expiry (bounded memory: at most one per alarm in the grace time). */
  prune(now: number): void {
    for (const [clipId, promise] of this.promises) if (now >= promise.expiresAt) this.promises.delete(clipId)
  }
}
