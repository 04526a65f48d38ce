import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CASE_SCHEMA_FILE_NAME, type Scope, type TaskName, type Workload } from '../case/constants.ts'
import { TASKS_BY_WORKLOAD } from '../case/rules.ts'
import { caseFileJsonSchema, type CaseFile, type Gates, type StepRecord } from '../case/schema.ts'
import { createCaseFileValidator, type Violation } from '../case/validator.ts'
import { describeMachine } from '../lib/machine.ts'
import { buildCase, buildCaseFile, caseIdFor, evidenceDateOf, NoPassingStepError, type SetupBlock } from './build-case.ts'
import { runChannels, type FramePath, type FrameSource } from './channels.ts'
import type { FrameRecord, ResourcePeaks } from './frames.ts'
import { blockedStep, judgeStep } from './judge.ts'
import { summarizeStep, type TaskPlan } from './measure.ts'
import { channelSchedule, type StepMode } from './plan.ts'
import { startPeakSampler } from './resources.ts'

/**
 * The capacity run (spec 2.8): step the channel count up, hold each step, judge it against
 * the gates, stop at the first failing step or at the ceiling, then write the raw summary
 * and the case file (with the summary's SHA-256) next to the cases schema, and validate it.
 *
 * What is measured is reached through a `CapacityTarget`: it sets up the pipelines for a
 * step's channels (or reports that it cannot: setup-blocked) and gives the frame path.
 */

export class SetupBlockedError extends Error {
  constructor(readonly block: SetupBlock) { super(block.reason) }
}

export interface OpenFramePath<F> extends FramePath<F> {
  close(): Promise<void>
}

export interface CapacityTarget<F> {
  /** Sets up `tasks` for `channels` channels; throws SetupBlockedError when it cannot. */
  open(tasks: TaskName[], channels: number): Promise<OpenFramePath<F>>
  frames: FrameSource<F>
}

export interface CapacityOptions {
  workload: Workload
  targetFps: number
  maxChannels: number
  holdSeconds: number
  stepMode: StepMode
  queueDepth: number
  drainTimeoutMs: number
  gates: Gates
  scope: Scope
  outDir: string
  /** The run's start; `evidenceDate` is its UTC day. */
  startedAt: Date
}

export interface StepEvidence {
  channels: number
  holdSeconds: number
  setupBlocked: SetupBlock | null
  peaks: ResourcePeaks | null
  frames: FrameRecord[]
}

export interface CapacityResult {
  summaryFile: string
  /** Null when no step passed: spec 2.8 cannot express that case (NoPassingStepError). */
  caseFile: string | null
  caseFileJson: CaseFile | null
  steps: StepRecord[]
  /** The raw per-step evidence written to the summary. */
  evidence: StepEvidence[]
  violations: Violation[]
  error: string | null
}

export async function runCapacity<F>(target: CapacityTarget<F>, o: CapacityOptions, log: (line: string) => void = () => {}): Promise<CapacityResult> {
  const taskNames = TASKS_BY_WORKLOAD[o.workload]
  const tasks: TaskPlan[] = taskNames.map((name) => ({ name, targetFps: o.targetFps }))
  const steps: StepRecord[] = []
  const evidence: StepEvidence[] = []
  let setupBlock: SetupBlock | null = null

  for (const channels of channelSchedule(o.maxChannels, o.stepMode)) {
    const plan = { channels, holdSeconds: o.holdSeconds, tasks }
    let framePath: OpenFramePath<F>
    try {
      framePath = await target.open([...taskNames], channels)
    } catch (err) {
      if (!(err instanceof SetupBlockedError)) throw err
      setupBlock = err.block
      steps.push(blockedStep(plan, err.block.reason))
      evidence.push({ channels, holdSeconds: o.holdSeconds, setupBlocked: err.block, peaks: null, frames: [] })
      log(`${channels} channel(s): STOP (${err.block.boundaryKind}: ${err.block.reason})`)
      break
    }
    let frames: FrameRecord[]
    let peaks: ResourcePeaks
    try {
      const sampler = startPeakSampler()
      frames = await runChannels(framePath, { ...plan, queueDepth: o.queueDepth, drainTimeoutMs: o.drainTimeoutMs }, target.frames)
      peaks = sampler.stop()
    } finally {
      await framePath.close()
    }
    const step = judgeStep(summarizeStep(plan, frames, peaks), o.gates)
    steps.push(step)
    evidence.push({ channels, holdSeconds: o.holdSeconds, setupBlocked: null, peaks, frames })
    log(`${channels} channel(s): ${step.result}, min fps ${step.minimumProcessingFps?.toFixed(2) ?? '–'}, discard ${step.averageDiscardRate?.toFixed(3) ?? '–'}, max critical path ${step.maximumCriticalPathLatencyMs?.toFixed(0) ?? '–'} ms${step.failureReason ? ` — ${step.failureReason}` : ''}`)
    if (step.result !== 'PASS') break
  }

  const caseId = caseIdFor(o.workload, o.targetFps)
  const machine = describeMachine()
  await mkdir(o.outDir, { recursive: true })
  const summary = {
    kind: 'capacity-run-summary',
    caseId,
    startedAt: o.startedAt.toISOString(),
    machine,
    workload: o.workload,
    targetFps: o.targetFps,
    settings: { maxChannels: o.maxChannels, holdSeconds: o.holdSeconds, stepMode: o.stepMode, queueDepth: o.queueDepth, drainTimeoutMs: o.drainTimeoutMs, scope: o.scope },
    gates: o.gates,
    steps: evidence,
    judged: steps,
  }
  const summaryBytes = Buffer.from(JSON.stringify(summary, null, 2) + '\n')
  const summaryFile = path.join(o.outDir, `${caseId}.summary.json`)
  await writeFile(summaryFile, summaryBytes)
  const sourceSummarySha256 = createHash('sha256').update(summaryBytes).digest('hex')

  let caseRecord
  try {
    caseRecord = buildCase({ caseId, sourceCaseId: caseId, workload: o.workload, targetFps: o.targetFps, configuredChannels: o.maxChannels, steps, sourceSummarySha256, setupBlock })
  } catch (err) {
    if (!(err instanceof NoPassingStepError)) throw err
    return { summaryFile, caseFile: null, caseFileJson: null, steps, evidence, violations: [], error: err.message }
  }
  const caseFileJson = buildCaseFile({ ...machine, scope: o.scope, evidenceDate: evidenceDateOf(o.startedAt), gates: o.gates, cases: [caseRecord] })
  const caseFile = path.join(o.outDir, `${caseId}.case.json`)
  await writeFile(caseFile, JSON.stringify(caseFileJson, null, 2) + '\n')
  // spec 2.8: `$schema` is the relative reference ./capacity-cases.schema.json: put it there.
  await writeFile(path.join(o.outDir, CASE_SCHEMA_FILE_NAME), JSON.stringify(caseFileJsonSchema(), null, 2) + '\n')
  const violations = createCaseFileValidator()(caseFileJson)
  return { summaryFile, caseFile, caseFileJson, steps, evidence, violations, error: violations.length === 0 ? null : 'the case file does not validate' }
}
