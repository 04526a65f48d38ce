import type { MiddlewareHandler } from 'hono'

/** Counts requests in flight, so that shutdown can wait for them (graceful SIGTERM). */
export class InFlight {
  private count = 0
  private waiters: (() => void)[] = []

  middleware(): MiddlewareHandler {
    return async (_c, next) => {
      this.count++
      try {
        await next()
      } finally {
        if (--this.count === 0) this.waiters.splice(0).forEach((resolve) => resolve())
      }
    }
  }

  get size() {
    return this.count
  }

  drained(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve))
  }
}
