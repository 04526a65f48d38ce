import { ApiError } from '../../shared/errors/index.ts'

export interface SessionWrite {
  readonly abort: AbortController
  /** Resolves when the writer released the session. */
  readonly done: Promise<void>
  release(): void
}

/**
 * One writer per session at a time. A second chunk for a session that is being written gets
 * TRANSFER_BUSY with retryAfterSeconds (spec 7.1) instead of waiting or interleaving bytes.
 * In-process: several runtimes sharing one sqld database need a shared locker instead.
 */
export class SessionWriteLocks {
  private readonly writes = new Map<string, SessionWrite>()

  acquire(uploadId: string): SessionWrite {
    if (this.writes.has(uploadId))
      throw new ApiError('TRANSFER_BUSY', { details: { uploadId, reason: 'another request is writing to this upload session' } })
    let release!: () => void
    const done = new Promise<void>((resolve) => { release = resolve })
    const write: SessionWrite = {
      abort: new AbortController(),
      done,
      release: () => {
        if (this.writes.get(uploadId) === write) this.writes.delete(uploadId)
        release()
      },
    }
    this.writes.set(uploadId, write)
    return write
  }

  get(uploadId: string): SessionWrite | undefined {
    return this.writes.get(uploadId)
  }
}
