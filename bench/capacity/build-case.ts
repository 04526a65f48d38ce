import { BENCHMARK_TITLE, CASE_SCHEMA_REF, CASE_SCHEMA_VERSION, CASE_SCHEMA_VERSION_NO_PASS, type BoundaryKind, type Scope, type Workload } from '../case/constants.ts'
import type { CaseFile, CaseRecord, Gates, StepRecord } from '../case/schema.ts'

/**
 * From the judged steps of a run to its case (spec 2.8) and the case file. Pure.
 *
 * The run stops at its first non-PASS step, so the last step decides the outcome:
 * - every step PASS → `completed`, `lower-bound` (the ceiling was reached without failing);
 * - last step FAIL → `stopped`, `performance-stop`;
 * - last step STOP → `setup-blocked` with the block's kind and reason.
 * `lastPassingChannels` is null when no step passed (schemaVersion 4, constants.ts).
 */

export interface SetupBlock {
  boundaryKind: Extract<BoundaryKind, 'binding-blocked' | 'storage-blocked'>
  reason: string
}

export interface CaseInput {
  caseId: string
  sourceCaseId: string
  workload: Workload
  targetFps: number
  configuredChannels: number
  steps: StepRecord[]
  sourceSummarySha256: string
  /** Required when the last step is STOP. */
  setupBlock: SetupBlock | null
}

export function buildCase(input: CaseInput): CaseRecord {
  const { steps } = input
  if (steps.length === 0) throw new RangeError('a case needs at least one step')
  const firstBlocked = steps.findIndex((s) => s.result !== 'PASS')
  if (firstBlocked !== -1 && firstBlocked !== steps.length - 1) throw new RangeError('the run must stop at its first FAIL or STOP step')
  const passing = steps.filter((s) => s.result === 'PASS')
  const last = steps[steps.length - 1]!
  if (last.result === 'STOP' && input.setupBlock === null) throw new RangeError('a STOP step needs its setup block (kind and reason)')

  const outcome = last.result === 'PASS'
    ? { outcome: 'completed' as const, boundaryKind: 'lower-bound' as const, blockedReason: null }
    : last.result === 'FAIL'
      ? { outcome: 'stopped' as const, boundaryKind: 'performance-stop' as const, blockedReason: null }
      : { outcome: 'setup-blocked' as const, boundaryKind: input.setupBlock!.boundaryKind, blockedReason: input.setupBlock!.reason }

  return {
    caseId: input.caseId,
    sourceCaseId: input.sourceCaseId,
    workload: input.workload,
    targetFps: input.targetFps,
    configuredChannels: input.configuredChannels,
    ...outcome,
    lastPassingChannels: passing[passing.length - 1]?.channels ?? null,
    firstBlockedChannels: last.result === 'PASS' ? null : last.channels,
    sourceSummarySha256: input.sourceSummarySha256,
    steps,
  }
}

export function buildCaseFile(input: { platformId: string; platform: string; scope: Scope; evidenceDate: string; gates: Gates; cases: CaseRecord[] }): CaseFile {
  return {
    $schema: CASE_SCHEMA_REF,
    // spec 2.8's version 3 whenever it can express every case.
    schemaVersion: input.cases.some((c) => c.lastPassingChannels === null) ? CASE_SCHEMA_VERSION_NO_PASS : CASE_SCHEMA_VERSION,
    benchmark: BENCHMARK_TITLE,
    platformId: input.platformId,
    platform: input.platform,
    scope: input.scope,
    evidenceDate: input.evidenceDate,
    caseCount: input.cases.length,
    gates: input.gates,
    cases: input.cases,
  }
}

/**
 * `caseId` of a run: workload, target rate, `-ungated` without motion gating and `-in320` with
 * the detector's input size chosen, as the pattern ^[a-z0-9-]+$ allows.
 */
export function caseIdFor(workload: Workload, targetFps: number, motionGating = true, detectorInputSize: number | null = null): string {
  return `${workload}-${String(targetFps).replace(/[^0-9]+/g, '-')}fps${motionGating ? '' : '-ungated'}${detectorInputSize === null ? '' : `-in${detectorInputSize}`}`
}

/** spec 2.8 `evidenceDate` (format date): the run's UTC calendar day. */
export const evidenceDateOf = (at: Date) => at.toISOString().slice(0, 10)
