/** Thrown when a request's deadline passes between pipeline stages. */
export class DeadlineExceeded extends Error {
  constructor(readonly stage: string) {
    super(`deadline exceeded before ${stage}`)
    this.name = 'DeadlineExceeded'
  }
}

export const checkDeadline = (deadline: number | undefined, stage: string) => {
  if (deadline !== undefined && Date.now() > deadline) throw new DeadlineExceeded(stage)
}
