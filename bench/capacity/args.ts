import { parseArgs } from 'node:util'
import { SCOPES, TASK_NAMES, WORKLOADS, type Scope, type TaskName, type Workload } from '../case/constants.ts'
import { DEFAULT_ALGORITHM_BY_TASK } from './algorithms.ts'
import type { Gates } from '../case/schema.ts'
import { DEFAULT_GATES, DEFAULT_RUN } from './defaults.ts'
import type { StepMode } from './plan.ts'

/**
 * Flags of `npm run bench:capacity -- --workload W --target-fps N [--max-channels M]
 * [--hold-seconds S] [--scope SCOPE] [--step double|increment] [--queue-depth Q]
 * [--out DIR] [--frames DIR] [--algorithm TASK=ID ...] [--min-fps-ratio X] [--max-missing-rate X]
 * [--max-average-discard-rate X] [--max-critical-path-latency-ms X] [--max-detector-latency-ms X]`.
 */
export interface CapacityArgs {
  workload: Workload
  targetFps: number
  maxChannels: number
  holdSeconds: number
  scope: Scope
  stepMode: StepMode
  queueDepth: number
  outDir: string
  frameDir: string | null
  /** Algorithm id per task (spec 2.3: ids differ by deployment). */
  algorithms: Record<TaskName, string>
  gates: Gates
}

export const USAGE = `usage: npm run bench:capacity -- --workload ${WORKLOADS.join('|')} --target-fps N
  [--max-channels M (${DEFAULT_RUN.maxChannels})] [--hold-seconds S (${DEFAULT_RUN.holdSeconds})] [--scope ${SCOPES.join('|')}]
  [--step double|increment] [--queue-depth Q (${DEFAULT_RUN.queueDepth})] [--out DIR (${DEFAULT_RUN.outDir})] [--frames DIR]
  [--algorithm TASK=ID (${Object.entries(DEFAULT_ALGORITHM_BY_TASK).map(([t, a]) => `${t}=${a}`).join(', ')})]
  [--min-fps-ratio X] [--max-missing-rate X] [--max-average-discard-rate X] [--max-critical-path-latency-ms X] [--max-detector-latency-ms X]`

const GATE_FLAGS: Record<string, keyof Gates> = {
  'min-fps-ratio': 'minFpsRatio',
  'max-missing-rate': 'maxMissingRate',
  'max-average-discard-rate': 'maxAverageDiscardRate',
  'max-critical-path-latency-ms': 'maxCriticalPathLatencyMs',
  'max-detector-latency-ms': 'maxDetectorLatencyMs',
}

function number(name: string, raw: string | undefined, fallback: number | undefined, check: (n: number) => boolean, rule: string): number {
  if (raw === undefined) {
    if (fallback === undefined) throw new Error(`--${name} is required`)
    return fallback
  }
  const n = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(n) || !check(n)) throw new Error(`--${name} must be ${rule}, got "${raw}"`)
  return n
}

const isInt1 = (n: number) => Number.isInteger(n) && n >= 1

/** Parses and checks the flags; throws an Error whose message says which flag is wrong. */
export function parseCapacityArgs(argv: string[]): CapacityArgs {
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      workload: { type: 'string' }, 'target-fps': { type: 'string' }, 'max-channels': { type: 'string' },
      'hold-seconds': { type: 'string' }, scope: { type: 'string' }, step: { type: 'string' },
      'queue-depth': { type: 'string' }, out: { type: 'string' }, frames: { type: 'string' },
      algorithm: { type: 'string', multiple: true },
      ...Object.fromEntries(Object.keys(GATE_FLAGS).map((k) => [k, { type: 'string' as const }])),
    },
  })
  const str = (k: string) => v[k as keyof typeof v] as string | undefined
  const algorithms = { ...DEFAULT_ALGORITHM_BY_TASK }
  for (const pair of (v.algorithm as string[] | undefined) ?? []) {
    const [task, id] = pair.split('=', 2)
    if (!TASK_NAMES.includes(task as TaskName) || !id) throw new Error(`--algorithm must be TASK=ID with TASK one of ${TASK_NAMES.join(', ')}, got "${pair}"`)
    algorithms[task as TaskName] = id
  }
  const workload = str('workload')
  if (!WORKLOADS.includes(workload as Workload)) throw new Error(`--workload must be one of ${WORKLOADS.join(', ')}, got "${workload ?? ''}"`)
  const scope = str('scope') ?? DEFAULT_RUN.scope
  if (!SCOPES.includes(scope as Scope)) throw new Error(`--scope must be one of ${SCOPES.join(', ')}, got "${scope}"`)
  const step = str('step') ?? DEFAULT_RUN.stepMode
  if (step !== 'double' && step !== 'increment') throw new Error(`--step must be double or increment, got "${step}"`)
  const gates = { ...DEFAULT_GATES }
  for (const [flag, key] of Object.entries(GATE_FLAGS)) gates[key] = number(flag, str(flag), DEFAULT_GATES[key], (n) => n >= 0, 'a number >= 0')
  return {
    workload: workload as Workload,
    targetFps: number('target-fps', str('target-fps'), undefined, (n) => n > 0, 'a number > 0'),
    maxChannels: number('max-channels', str('max-channels'), DEFAULT_RUN.maxChannels, isInt1, 'an integer >= 1'),
    holdSeconds: number('hold-seconds', str('hold-seconds'), DEFAULT_RUN.holdSeconds, (n) => n > 0, 'a number > 0'),
    scope: scope as Scope,
    stepMode: step,
    queueDepth: number('queue-depth', str('queue-depth'), DEFAULT_RUN.queueDepth, (n) => Number.isInteger(n) && n >= 0, 'an integer >= 0'),
    outDir: str('out') ?? DEFAULT_RUN.outDir,
    frameDir: str('frames') ?? null,
    algorithms,
    gates,
  }
}
