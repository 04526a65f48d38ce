import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CASE_SCHEMA_FILE_NAME, type Scope, type Workload } from '../case/constants.ts'
import { TASKS_BY_WORKLOAD } from '../case/rules.ts'
import { caseFileJsonSchema, type CaseFile, type Gates, type StepRecord } from '../case/schema.ts'
import { createCaseFileValidator, type Violation } from '../case/validator.ts'
import { describeMachine } from '../lib/machine.ts'
import { buildCase, buildCaseFile, evidenceDateOf, type SetupBlock } from './build-case.ts'
import { blockedStep, judgeStep, type StepMeasurement } from './judge.ts'
import { channelSchedule, type StepMode, type StepPlan, type TaskPlan } from './plan.ts'

/**
 * The capacity run (spec 2.8): step the channel count up, hold each step, judge it against
 * the gates, stop at the first failing step or at the ceiling, then write the raw summary
 * and the case file (with the summary's SHA-256) next to the cases schema, and validate it.
 *
 * What is measured is reached through a `CapacityTarget` (stream-target.ts: real stream
 * tasks on the device): it runs one step and returns its figures and raw evidence, or
 * reports that the step cannot be set up (setup-blocked).
 */

export class SetupBlockedError extends Error {
  constructor(readonly block: SetupBlock) { super(block.reason) }
}

export interface StepOutcome {
  measurement: StepMeasurement
  /** The raw observations the figures come from, written to the summary. */
  evidence: Record<string, unknown>
}

export interface CapacityTarget {
  /** Runs one step; throws SetupBlockedError when its tasks cannot be set up. */
  runStep(plan: StepPlan): Promise<StepOutcome>
}

export interface CapacityOptions {
  caseId: string
  workload: Workload
  targetFps: number
  minChannels: number
  maxChannels: number
  holdSeconds: number
  stepMode: StepMode
  gates: Gates
  scope: Scope
  outDir: string
  /** How the run was set up (footage, motion gating, warm-up, load average …), written to the summary. */
  settings: Record<string, unknown>
  /** The run's start; `evidenceDate` is its UTC day. */
  startedAt: Date
}

export interface StepEvidence {
  channels: number
  holdSeconds: number
  setupBlocked: SetupBlock | null
  evidence: Record<string, unknown> | null
}

export interface CapacityResult {
  summaryFile: string
  caseFile: string
  caseFileJson: CaseFile
  steps: StepRecord[]
  /** The raw per-step evidence written to the summary. */
  evidence: StepEvidence[]
  violations: Violation[]
}

export async function runCapacity(target: CapacityTarget, o: CapacityOptions, log: (line: string) => void = () => {}): Promise<CapacityResult> {
  const tasks: TaskPlan[] = TASKS_BY_WORKLOAD[o.workload].map((name) => ({ name, targetFps: o.targetFps }))
  const steps: StepRecord[] = []
  const evidence: StepEvidence[] = []
  let setupBlock: SetupBlock | null = null

  for (const channels of channelSchedule(o.maxChannels, o.stepMode, o.minChannels)) {
    const plan: StepPlan = { channels, holdSeconds: o.holdSeconds, tasks }
    let outcome: StepOutcome
    try {
      outcome = await target.runStep(plan)
    } catch (err) {
      if (!(err instanceof SetupBlockedError)) throw err
      setupBlock = err.block
      steps.push(blockedStep(plan, err.block.reason))
      evidence.push({ channels, holdSeconds: o.holdSeconds, setupBlocked: err.block, evidence: null })
      log(`${channels} channel(s): STOP (${err.block.boundaryKind}: ${err.block.reason})`)
      break
    }
    const step = judgeStep(outcome.measurement, o.gates)
    steps.push(step)
    evidence.push({ channels, holdSeconds: step.holdSeconds, setupBlocked: null, evidence: outcome.evidence })
    log(`${channels} channel(s): ${step.result}, min fps ${step.minimumProcessingFps?.toFixed(2) ?? '–'}, discard ${step.averageDiscardRate?.toFixed(3) ?? '–'}, ` +
      `critical path p99 ${step.maximumCriticalPathLatencyMs?.toFixed(0) ?? '–'} ms, CPU peak ${step.cpuPeakPercent?.toFixed(0) ?? '–'} %${step.failureReason ? ` — ${step.failureReason}` : ''}`)
    if (step.result !== 'PASS') break
  }

  const machine = describeMachine()
  await mkdir(o.outDir, { recursive: true })
  const summary = {
    kind: 'capacity-run-summary',
    caseId: o.caseId,
    startedAt: o.startedAt.toISOString(),
    machine,
    workload: o.workload,
    targetFps: o.targetFps,
    settings: { minChannels: o.minChannels, maxChannels: o.maxChannels, holdSeconds: o.holdSeconds, stepMode: o.stepMode, scope: o.scope, ...o.settings },
    gates: o.gates,
    steps: evidence,
    judged: steps,
  }
  const summaryBytes = Buffer.from(JSON.stringify(summary, null, 2) + '\n')
  const summaryFile = path.join(o.outDir, `${o.caseId}.summary.json`)
  await writeFile(summaryFile, summaryBytes)
  const sourceSummarySha256 = createHash('sha256').update(summaryBytes).digest('hex')

  const caseRecord = buildCase({ caseId: o.caseId, sourceCaseId: o.caseId, workload: o.workload, targetFps: o.targetFps, configuredChannels: o.maxChannels, steps, sourceSummarySha256, setupBlock })
  const caseFileJson = buildCaseFile({ ...machine, scope: o.scope, evidenceDate: evidenceDateOf(o.startedAt), gates: o.gates, cases: [caseRecord] })
  const caseFile = path.join(o.outDir, `${o.caseId}.case.json`)
  await writeFile(caseFile, JSON.stringify(caseFileJson, null, 2) + '\n')
  // spec 2.8: `$schema` is the relative reference ./capacity-cases.schema.json: put it there.
  await writeFile(path.join(o.outDir, CASE_SCHEMA_FILE_NAME), JSON.stringify(caseFileJsonSchema(), null, 2) + '\n')
  return { summaryFile, caseFile, caseFileJson, steps, evidence, violations: createCaseFileValidator()(caseFileJson) }
}
