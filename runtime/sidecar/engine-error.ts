/**
 * A failure the sidecar reports to the runtime by catalogue id (shared/errors/catalogue.ts);
 * the client re-throws it as the matching ApiError with the same details.
 */
export class EngineError extends Error {
  constructor(readonly errorId: string, message: string, readonly details: Record<string, unknown> = {}, readonly retryAfterSeconds?: number) {
    super(message)
    this.name = 'EngineError'
  }
}
