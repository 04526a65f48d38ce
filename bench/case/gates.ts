import type { Gates, StepRecord } from './schema.ts'

/**
 * What each gate of spec 2.8 bounds, as data. The capacity runner judges a step with
 * `gateMisses` and the validator checks that every PASS step has none, so both read the
 * gates the same way.
 *
 * - `taskField`: the per-task measurement the gate bounds. On a step judged PASS it must be
 *   measured: a null there means the gate cannot be shown met, which counts as a miss.
 * - `stepField`: the step-level aggregate the gate also bounds, when there is one. It may be
 *   null (the per-task figures carry the evidence); when present it must meet the gate.
 */
export interface GateRule {
  gate: keyof Gates
  bound: 'min' | 'max'
  taskField: 'minimumFpsRatio' | 'missingRate' | 'averageDiscardRate' | 'maximumCriticalPathLatencyMs' | 'maximumDetectorLatencyMs'
  stepField: 'averageDiscardRate' | 'maximumCriticalPathLatencyMs' | 'maximumDetectorLatencyMs' | null
}

export const GATE_RULES: readonly GateRule[] = [
  { gate: 'minFpsRatio', bound: 'min', taskField: 'minimumFpsRatio', stepField: null },
  { gate: 'maxMissingRate', bound: 'max', taskField: 'missingRate', stepField: null },
  { gate: 'maxAverageDiscardRate', bound: 'max', taskField: 'averageDiscardRate', stepField: 'averageDiscardRate' },
  { gate: 'maxCriticalPathLatencyMs', bound: 'max', taskField: 'maximumCriticalPathLatencyMs', stepField: 'maximumCriticalPathLatencyMs' },
  { gate: 'maxDetectorLatencyMs', bound: 'max', taskField: 'maximumDetectorLatencyMs', stepField: 'maximumDetectorLatencyMs' },
]

export interface GateMiss {
  /** JSON pointer relative to the step, e.g. `/tasks/0/minimumFpsRatio`. */
  pointer: string
  gate: keyof Gates
  value: number | null
  limit: number
  message: string
}

const meets = (bound: GateRule['bound'], value: number, limit: number) =>
  bound === 'min' ? value >= limit : value <= limit

function describe(rule: GateRule, where: string, value: number | null, limit: number): string {
  if (value === null) return `${where} is null, so gate ${rule.gate} (${limit}) cannot be shown met`
  const op = rule.bound === 'min' ? '>=' : '<='
  return `${where} = ${value} breaks gate ${rule.gate}: must be ${op} ${limit}`
}

/** Every gate a step's measurements miss; empty when the step meets every gate. */
export function gateMisses(step: Pick<StepRecord, 'tasks' | 'averageDiscardRate' | 'maximumCriticalPathLatencyMs' | 'maximumDetectorLatencyMs'>, gates: Gates): GateMiss[] {
  const misses: GateMiss[] = []
  for (const rule of GATE_RULES) {
    const limit = gates[rule.gate]
    step.tasks.forEach((task, i) => {
      const value = task[rule.taskField]
      if (value === null || !meets(rule.bound, value, limit)) {
        const where = `task ${task.name} ${rule.taskField}`
        misses.push({ pointer: `/tasks/${i}/${rule.taskField}`, gate: rule.gate, value, limit, message: describe(rule, where, value, limit) })
      }
    })
    if (rule.stepField !== null) {
      const value = step[rule.stepField]
      if (value !== null && !meets(rule.bound, value, limit)) {
        misses.push({ pointer: `/${rule.stepField}`, gate: rule.gate, value, limit, message: describe(rule, `step ${rule.stepField}`, value, limit) })
      }
    }
  }
  return misses
}
