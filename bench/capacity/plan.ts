import type { TaskName } from '../case/constants.ts'

/**
 * What a capacity run steps through (spec 2.8): channel counts 1, 2, 4, … or +1 from
 * `start`, never above the ceiling `maxChannels`; the last step is the ceiling itself, so a
 * run that passes every step measures exactly `maxChannels` (a `lower-bound` case).
 */
export type StepMode = 'double' | 'increment'

/** One task of a workload at its rate, on every channel of a step. */
export interface TaskPlan {
  name: TaskName
  targetFps: number
}

/** One step: `channels` channels of every task, held `holdSeconds`. */
export interface StepPlan {
  channels: number
  holdSeconds: number
  tasks: TaskPlan[]
}

export function channelSchedule(maxChannels: number, mode: StepMode, start = 1): number[] {
  if (!Number.isInteger(maxChannels) || maxChannels < 1) throw new RangeError(`maxChannels must be an integer >= 1, got ${maxChannels}`)
  if (!Number.isInteger(start) || start < 1 || start > maxChannels) throw new RangeError(`start must be an integer in 1..${maxChannels}, got ${start}`)
  const counts: number[] = []
  for (let n = start; n < maxChannels; n = mode === 'double' ? n * 2 : n + 1) counts.push(n)
  counts.push(maxChannels)
  return counts
}
