import { Type, type Static, type TSchema } from '@sinclair/typebox'
import {
  BENCHMARK_TITLE, BOUNDARY_KINDS, CASE_SCHEMA_ID, CASE_SCHEMA_REF, CASE_SCHEMA_VERSIONS,
  OUTCOMES, SCOPES, STEP_RESULTS, TASK_NAMES, WORKLOADS,
} from './constants.ts'

/**
 * The benchmark case file schema, spec 2.8, as JSON Schema draft 2020-12. This TypeBox
 * definition is the one source of truth: `caseFileJsonSchema()` serialises it (the runner
 * writes it next to each case file as `capacity-cases.schema.json`) and the validator
 * compiles it with ajv.
 *
 * Enumerations and nullables use `enum` / `type: [T, 'null']` rather than TypeBox unions so
 * that a violation yields one clear ajv error instead of one per union branch.
 */

const closed = { additionalProperties: false } as const // spec 2.8: unknown properties rejected at every level

const Slug = Type.String({ pattern: '^[a-z0-9-]+$' }) // spec 2.8: platformId, caseId, sourceCaseId
const Sha256Hex = Type.String({ pattern: '^[0-9a-f]{64}$' }) // spec 2.8: 64 lowercase hex characters
const PositiveNumber = Type.Number({ exclusiveMinimum: 0 }) // spec 2.8: "number > 0"
const CountAtLeastOne = Type.Integer({ minimum: 1 }) // spec 2.8: "integer >= 1"
const NonNegativeGate = Type.Number({ minimum: 0 }) // spec 2.8: gates are "number >= 0"
/** spec 2.8: "number >= 0 or null" */
const MeasurementOrNull = Type.Unsafe<number | null>({ type: ['number', 'null'], minimum: 0 })
/** spec 2.8: "integer >= 1 or null" */
const CountOrNull = Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1 })
/** spec 2.8: "string or null" */
const TextOrNull = Type.Unsafe<string | null>({ type: ['string', 'null'] })
const oneOf = <T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values] })

export const GatesSchema = Type.Object({
  minFpsRatio: NonNegativeGate,
  maxMissingRate: NonNegativeGate,
  maxAverageDiscardRate: NonNegativeGate,
  maxCriticalPathLatencyMs: NonNegativeGate,
  maxDetectorLatencyMs: NonNegativeGate,
}, closed)

export const TaskSchema = Type.Object({
  name: oneOf(TASK_NAMES),
  targetFps: PositiveNumber,
  minimumProcessingFps: MeasurementOrNull,
  minimumFpsRatio: MeasurementOrNull,
  missingRate: MeasurementOrNull,
  averageDiscardRate: MeasurementOrNull,
  maximumDetectorLatencyMs: MeasurementOrNull,
  maximumCriticalPathLatencyMs: MeasurementOrNull,
}, closed)

export const StepSchema = Type.Object({
  channels: CountAtLeastOne,
  holdSeconds: PositiveNumber,
  result: oneOf(STEP_RESULTS),
  tasks: Type.Array(TaskSchema, { minItems: 1, maxItems: 2 }), // spec 2.8: 1 to 2 items
  minimumProcessingFps: MeasurementOrNull,
  maximumDetectorLatencyMs: MeasurementOrNull,
  maximumCriticalPathLatencyMs: MeasurementOrNull,
  averageDiscardRate: MeasurementOrNull,
  maximumChannelDiscardRate: MeasurementOrNull,
  acceleratorPeakPercent: MeasurementOrNull,
  acceleratorMemoryPeakPercent: MeasurementOrNull,
  cpuPeakPercent: MeasurementOrNull,
  memoryPeakPercent: MeasurementOrNull,
  failureReason: TextOrNull,
}, closed)

export const CaseSchema = Type.Object({
  caseId: Slug,
  sourceCaseId: Slug,
  workload: oneOf(WORKLOADS),
  targetFps: PositiveNumber,
  configuredChannels: CountAtLeastOne,
  outcome: oneOf(OUTCOMES),
  boundaryKind: oneOf(BOUNDARY_KINDS),
  /** spec 2.8 (version 3): integer >= 1; version 4 also allows null (no step passed, rules.ts). */
  lastPassingChannels: CountOrNull,
  firstBlockedChannels: CountOrNull,
  blockedReason: TextOrNull,
  sourceSummarySha256: Sha256Hex,
  steps: Type.Array(StepSchema, { minItems: 1 }),
}, closed)

export const CaseFileSchema = Type.Object({
  $schema: Type.Literal(CASE_SCHEMA_REF),
  schemaVersion: Type.Unsafe<(typeof CASE_SCHEMA_VERSIONS)[number]>({ type: 'integer', enum: [...CASE_SCHEMA_VERSIONS] }),
  benchmark: Type.Literal(BENCHMARK_TITLE),
  platformId: Slug,
  platform: Type.String({ minLength: 1 }),
  scope: oneOf(SCOPES),
  evidenceDate: Type.String({ format: 'date' }),
  caseCount: CountAtLeastOne,
  gates: GatesSchema,
  cases: Type.Array(CaseSchema, { minItems: 1 }),
}, {
  ...closed,
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: CASE_SCHEMA_ID,
  title: BENCHMARK_TITLE,
})

export type Gates = Static<typeof GatesSchema>
export type TaskRecord = Static<typeof TaskSchema>
export type StepRecord = Static<typeof StepSchema>
export type CaseRecord = Static<typeof CaseSchema>
export type CaseFile = Static<typeof CaseFileSchema>

/** The schema as plain JSON (TypeBox's symbol keys dropped), ready to write to a file. */
export function caseFileJsonSchema(): Record<string, unknown> {
  return JSON.parse(JSON.stringify(CaseFileSchema as TSchema)) as Record<string, unknown>
}
