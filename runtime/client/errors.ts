import type { MessageItem } from './types.ts'

/**
 * The device answered, and the answer is a failure: `resCode` 0 (spec 7), an HTTP error
 * status, or a body that is not the envelope (a bare 413 from a low-level layer, spec 7.1).
 */
export class DeviceError extends Error {
  readonly name = 'DeviceError'
  constructor(
    /** The route called. */
    readonly route: string,
    /** HTTP status of the answer. */
    readonly status: number,
    /** Message items of the envelope; empty when the body was not an envelope. */
    readonly items: MessageItem[],
    /** The body as text when it was not an envelope. */
    readonly rawBody: string | null = null,
  ) {
    super(items[0] ? `${items[0].messageKey}: ${items[0].msgText}` : `HTTP ${status} from ${route}`)
  }

  get item(): MessageItem | undefined {
    return this.items[0]
  }

  get messageKey(): string | undefined {
    return this.items[0]?.messageKey
  }

  /** spec 5.3: a missing or expired mtk; sign in again and start a new upload session. */
  get unauthorized(): boolean {
    return this.status === 401
  }
}

/** The device could not be reached or the connection broke (no answer to judge). */
export class NetworkError extends Error {
  readonly name = 'NetworkError'
  constructor(readonly route: string, readonly cause: unknown, url = route) {
    // fetch reports "fetch failed"; the reason (ECONNREFUSED, ECONNRESET, ...) is its cause.
    const inner = (cause as { cause?: { code?: string; message?: string } })?.cause
    super(`cannot reach the device at ${url}: ${inner?.code ?? inner?.message ?? (cause as Error)?.message ?? String(cause)}`)
  }
}

/** The caller gave up (AbortSignal). */
export const isAbort = (error: unknown) => (error as Error)?.name === 'AbortError'
