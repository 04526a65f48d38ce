import { parseArgs } from 'node:util'
import { SCOPES, TASK_NAMES, WORKLOADS, type Scope, type TaskName, type Workload } from '../case/constants.ts'
import { DEFAULT_ALGORITHM_BY_TASK } from './algorithms.ts'
import type { Gates } from '../case/schema.ts'
import { DEFAULT_GATES, DEFAULT_RUN } from './defaults.ts'
import type { StepMode } from './plan.ts'

/** Flags of `npm run bench:capacity` (USAGE below). */
export interface CapacityArgs {
  workload: Workload
  targetFps: number
  minChannels: number
  maxChannels: number
  holdSeconds: number
  warmupSeconds: number
  scope: Scope
  stepMode: StepMode
  motionGating: boolean
  /** `taskConfig.detectorInputSize` of every task (docs/detection.md "Detector input size"); null: the algorithm's own. */
  detectorInputSize: number | null
  video: string
  helmetClassifier: string | null
  outDir: string
  /** Algorithm id per task (spec 2.3: ids differ by deployment). */
  algorithms: Record<TaskName, string>
  gates: Gates
}

export const USAGE = `usage: npm run bench:capacity -- --workload ${WORKLOADS.join('|')} --target-fps N
  [--min-channels N (${DEFAULT_RUN.minChannels})] [--max-channels M (${DEFAULT_RUN.maxChannels})] [--step double|increment (${DEFAULT_RUN.stepMode})]
  [--hold-seconds S (${DEFAULT_RUN.holdSeconds})] [--warmup-seconds S (${DEFAULT_RUN.warmupSeconds})] [--motion-gating on|off (on)]
  [--detector-input-size N (the algorithm's own)]
  [--video FILE.mp4 (${DEFAULT_RUN.video})] [--helmet-classifier FILE.onnx] [--scope ${SCOPES.join('|')}] [--out DIR (${DEFAULT_RUN.outDir})]
  [--algorithm TASK=ID (${Object.entries(DEFAULT_ALGORITHM_BY_TASK).map(([t, a]) => `${t}=${a}`).join(', ')})]
  [--min-fps-ratio X] [--max-missing-rate X] [--max-average-discard-rate X] [--max-critical-path-latency-ms X] [--max-detector-latency-ms X]`

const GATE_FLAGS: Record<string, keyof Gates> = {
  'min-fps-ratio': 'minFpsRatio',
  'max-missing-rate': 'maxMissingRate',
  'max-average-discard-rate': 'maxAverageDiscardRate',
  'max-critical-path-latency-ms': 'maxCriticalPathLatencyMs',
  'max-detector-latency-ms': 'maxDetectorLatencyMs',
}

const STRING_FLAGS = ['workload', 'target-fps', 'min-channels', 'max-channels', 'hold-seconds', 'warmup-seconds', 'scope', 'step',
  'motion-gating', 'detector-input-size', 'video', 'helmet-classifier', 'out', ...Object.keys(GATE_FLAGS)]

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
      ...Object.fromEntries(STRING_FLAGS.map((k) => [k, { type: 'string' as const }])),
      algorithm: { type: 'string', multiple: true },
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
  const gating = str('motion-gating') ?? 'on'
  if (gating !== 'on' && gating !== 'off') throw new Error(`--motion-gating must be on or off, got "${gating}"`)
  const gates = { ...DEFAULT_GATES }
  for (const [flag, key] of Object.entries(GATE_FLAGS)) gates[key] = number(flag, str(flag), DEFAULT_GATES[key], (n) => n >= 0, 'a number >= 0')
  const maxChannels = number('max-channels', str('max-channels'), DEFAULT_RUN.maxChannels, isInt1, 'an integer >= 1')
  return {
    workload: workload as Workload,
    targetFps: number('target-fps', str('target-fps'), undefined, (n) => n > 0, 'a number > 0'),
    minChannels: number('min-channels', str('min-channels'), DEFAULT_RUN.minChannels, (n) => isInt1(n) && n <= maxChannels, `an integer in 1..${maxChannels} (--max-channels)`),
    maxChannels,
    holdSeconds: number('hold-seconds', str('hold-seconds'), DEFAULT_RUN.holdSeconds, (n) => n > 0, 'a number > 0'),
    warmupSeconds: number('warmup-seconds', str('warmup-seconds'), DEFAULT_RUN.warmupSeconds, (n) => n >= 0, 'a number >= 0'),
    scope: scope as Scope,
    stepMode: step,
    motionGating: gating === 'on',
    detectorInputSize: str('detector-input-size') === undefined ? null : number('detector-input-size', str('detector-input-size'), undefined, isInt1, 'an integer >= 1'),
    video: str('video') ?? DEFAULT_RUN.video,
    helmetClassifier: str('helmet-classifier') ?? null,
    outDir: str('out') ?? DEFAULT_RUN.outDir,
    algorithms,
    gates,
  }
}
