/**
 * The fixed values of the benchmark case file (spec 2.8, 9). Defined here once; the schema,
 * the validator, the capacity runner and the tests import them from this module.
 */

/** spec 2.8: `benchmark` is a constant, product-specific title (`<benchmark_title>`). */
export const BENCHMARK_TITLE = 'Edge AI Device Small-Model Capacity Benchmark'

/** spec 2.8 / 9: the case file carries `schemaVersion` with constant 3. */
export const CASE_SCHEMA_VERSION = 3

/**
 * This device's extension of spec 2.8: version 4 is version 3 where `lastPassingChannels` may
 * be null, for a case in which no step passed (setup-blocked at its first step, e.g. a
 * workload whose operator-supplied model is not installed, or a first step that failed).
 * Version 3 cannot express such a case; the runner writes 4 only for a file that holds one.
 */
export const CASE_SCHEMA_VERSION_NO_PASS = 4
export const CASE_SCHEMA_VERSIONS = [CASE_SCHEMA_VERSION, CASE_SCHEMA_VERSION_NO_PASS] as const

/** File name of the cases schema; the runner writes it next to every case file it produces. */
export const CASE_SCHEMA_FILE_NAME = 'capacity-cases.schema.json'

/** spec 2.8: `$schema` is a constant relative reference to the cases schema. */
export const CASE_SCHEMA_REF = `./${CASE_SCHEMA_FILE_NAME}`

/** `$id` of the cases schema itself (an identifier, never fetched). */
export const CASE_SCHEMA_ID = 'urn:edge-ai-device:benchmark:capacity-cases:v3-v4'

/** spec 2.8 enumerations (3.3: the states are these enumerations). */
export const SCOPES = ['release-platform', 'additional-experimental-platform'] as const
export const WORKLOADS = ['person-detector', 'no-safety-helmet-analysis', 'concurrent-mixed'] as const
export const TASK_NAMES = ['person-detector', 'no-safety-helmet-analysis'] as const
export const OUTCOMES = ['completed', 'stopped', 'setup-blocked'] as const
export const BOUNDARY_KINDS = ['lower-bound', 'performance-stop', 'binding-blocked', 'storage-blocked'] as const
export const STEP_RESULTS = ['PASS', 'FAIL', 'STOP'] as const

export type Scope = (typeof SCOPES)[number]
export type Workload = (typeof WORKLOADS)[number]
export type TaskName = (typeof TASK_NAMES)[number]
export type Outcome = (typeof OUTCOMES)[number]
export type BoundaryKind = (typeof BOUNDARY_KINDS)[number]
export type StepResult = (typeof STEP_RESULTS)[number]
