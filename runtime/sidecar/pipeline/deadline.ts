import { monotonicNow } from '../../../shared/clock.ts'

/** Thrown when a request's deadline (ms on the sidecar's monotonic clock) passes between pipeline stages. */
export class DeadlineExceeded extends Error {
  constructor(readonly stage: string) {
    super(`deadline exceeded before ${stage}`)
    this.name = 'DeadlineExceeded'
  }
}

export const checkDeadline = (deadline: number | undefined, stage: string) => {
  if (deadline !== undefined && monotonicNow() > deadline) throw new DeadlineExceeded(stage)
}
