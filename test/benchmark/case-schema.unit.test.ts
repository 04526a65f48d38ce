import { describe, expect, it } from 'vitest'
import { BENCHMARK_TITLE, CASE_SCHEMA_REF } from '../../bench/case/constants.ts'
import { createCaseFileValidator, formatViolation } from '../../bench/case/validator.ts'
import { brokenCaseFile, validCaseFile } from './case-file-fixture.ts'

// Spec 2.8: each row breaks exactly one schema rule of a valid file and names the single
// violation expected: the JSON pointer of the offending field and the schema keyword.
type Mutable = Record<string, any>
const validate = createCaseFileValidator()
const pointersAndRules = (file: unknown) => validate(file).map((v) => ({ pointer: v.pointer, rule: v.rule }))

const broken = brokenCaseFile

const schemaCases: Array<[string, (f: Mutable) => void, string, string]> = [
  // missing required field, one per level
  ['missing top-level platform', (f) => { delete f.platform }, '/platform', 'required'],
  ['missing top-level $schema', (f) => { delete f.$schema }, '/$schema', 'required'],
  ['missing gates.maxDetectorLatencyMs', (f) => { delete f.gates.maxDetectorLatencyMs }, '/gates/maxDetectorLatencyMs', 'required'],
  ['missing case sourceSummarySha256', (f) => { delete f.cases[0].sourceSummarySha256 }, '/cases/0/sourceSummarySha256', 'required'],
  ['missing step failureReason', (f) => { delete f.cases[0].steps[1].failureReason }, '/cases/0/steps/1/failureReason', 'required'],
  ['missing task missingRate', (f) => { delete f.cases[1].steps[0].tasks[1].missingRate }, '/cases/1/steps/0/tasks/1/missingRate', 'required'],
  // extra property, one per level
  ['extra top-level property', (f) => { f.notes = 'x' }, '/notes', 'additionalProperties'],
  ['extra gates property', (f) => { f.gates.maxCpuPercent = 90 }, '/gates/maxCpuPercent', 'additionalProperties'],
  ['extra case property', (f) => { f.cases[1].comment = 'x' }, '/cases/1/comment', 'additionalProperties'],
  ['extra step property', (f) => { f.cases[0].steps[0].gpu = null }, '/cases/0/steps/0/gpu', 'additionalProperties'],
  ['extra task property', (f) => { f.cases[0].steps[2].tasks[0].p99 = 1 }, '/cases/0/steps/2/tasks/0/p99', 'additionalProperties'],
  // constants
  ['schemaVersion 2', (f) => { f.schemaVersion = 2 }, '/schemaVersion', 'enum'],
  ['schemaVersion 5', (f) => { f.schemaVersion = 5 }, '/schemaVersion', 'enum'],
  ['$schema absolute URL', (f) => { f.$schema = 'https://json-schema.org/draft/2020-12/schema' }, '/$schema', 'const'],
  ['another benchmark title', (f) => { f.benchmark = 'Some Benchmark' }, '/benchmark', 'const'],
  // enumerations
  ['scope outside enum', (f) => { f.scope = 'release' }, '/scope', 'enum'],
  ['workload outside enum', (f) => { f.cases[0].workload = 'face-detector' }, '/cases/0/workload', 'enum'],
  ['outcome outside enum', (f) => { f.cases[0].outcome = 'failed' }, '/cases/0/outcome', 'enum'],
  ['boundaryKind outside enum', (f) => { f.cases[1].boundaryKind = 'upper-bound' }, '/cases/1/boundaryKind', 'enum'],
  ['step result lowercase', (f) => { f.cases[0].steps[0].result = 'pass' }, '/cases/0/steps/0/result', 'enum'],
  ['task name outside enum', (f) => { f.cases[0].steps[0].tasks[0].name = 'concurrent-mixed' }, '/cases/0/steps/0/tasks/0/name', 'enum'],
  // patterns and formats
  ['platformId with uppercase and underscore', (f) => { f.platformId = 'Linux_x64' }, '/platformId', 'pattern'],
  ['caseId with a space', (f) => { f.cases[0].caseId = 'person detector' }, '/cases/0/caseId', 'pattern'],
  ['sourceCaseId with a dot', (f) => { f.cases[1].sourceCaseId = 'mixed.v2' }, '/cases/1/sourceCaseId', 'pattern'],
  ['sha256 in uppercase hex', (f) => { f.cases[0].sourceSummarySha256 = 'A'.repeat(64) }, '/cases/0/sourceSummarySha256', 'pattern'],
  ['sha256 of 63 characters', (f) => { f.cases[0].sourceSummarySha256 = 'a'.repeat(63) }, '/cases/0/sourceSummarySha256', 'pattern'],
  ['evidenceDate not a calendar date', (f) => { f.evidenceDate = '2026-02-30' }, '/evidenceDate', 'format'],
  ['evidenceDate with a time', (f) => { f.evidenceDate = '2026-11-22T10:00:00Z' }, '/evidenceDate', 'format'],
  ['platform empty', (f) => { f.platform = '' }, '/platform', 'minLength'],
  // bounds: >= 1
  ['caseCount 0', (f) => { f.caseCount = 0 }, '/caseCount', 'minimum'],
  ['configuredChannels 0', (f) => { f.cases[0].configuredChannels = 0 }, '/cases/0/configuredChannels', 'minimum'],
  ['lastPassingChannels 0', (f) => { f.cases[0].lastPassingChannels = 0 }, '/cases/0/lastPassingChannels', 'minimum'],
  ['firstBlockedChannels 0', (f) => { f.cases[0].firstBlockedChannels = 0 }, '/cases/0/firstBlockedChannels', 'minimum'],
  ['step channels 0', (f) => { f.cases[0].steps[0].channels = 0 }, '/cases/0/steps/0/channels', 'minimum'],
  // bounds: integers
  ['caseCount 1.5', (f) => { f.caseCount = 1.5 }, '/caseCount', 'type'],
  ['step channels 1.5', (f) => { f.cases[1].steps[0].channels = 1.5 }, '/cases/1/steps/0/channels', 'type'],
  ['firstBlockedChannels as a string', (f) => { f.cases[0].firstBlockedChannels = '4' }, '/cases/0/firstBlockedChannels', 'type'],
  // bounds: > 0
  ['case targetFps 0', (f) => { f.cases[0].targetFps = 0 }, '/cases/0/targetFps', 'exclusiveMinimum'],
  ['task targetFps 0', (f) => { f.cases[0].steps[0].tasks[0].targetFps = 0 }, '/cases/0/steps/0/tasks/0/targetFps', 'exclusiveMinimum'],
  ['holdSeconds 0', (f) => { f.cases[1].steps[1].holdSeconds = 0 }, '/cases/1/steps/1/holdSeconds', 'exclusiveMinimum'],
  ['case targetFps null', (f) => { f.cases[0].targetFps = null }, '/cases/0/targetFps', 'type'],
  // bounds: >= 0
  ['gate below 0', (f) => { f.gates.maxMissingRate = -0.1 }, '/gates/maxMissingRate', 'minimum'],
  ['step measurement below 0', (f) => { f.cases[0].steps[2].cpuPeakPercent = -1 }, '/cases/0/steps/2/cpuPeakPercent', 'minimum'],
  ['task measurement below 0', (f) => { f.cases[0].steps[2].tasks[0].missingRate = -0.5 }, '/cases/0/steps/2/tasks/0/missingRate', 'minimum'],
  ['gate null', (f) => { f.gates.minFpsRatio = null }, '/gates/minFpsRatio', 'type'],
  ['blockedReason a number', (f) => { f.cases[0].blockedReason = 5 }, '/cases/0/blockedReason', 'type'],
  ['failureReason a boolean', (f) => { f.cases[0].steps[2].failureReason = false }, '/cases/0/steps/2/failureReason', 'type'],
  // array sizes
  ['three tasks in a step', (f) => { f.cases[1].steps[0].tasks.push({ ...f.cases[1].steps[0].tasks[0] }) }, '/cases/1/steps/0/tasks', 'maxItems'],
  ['no task in a step', (f) => { f.cases[0].steps[2].tasks = [] }, '/cases/0/steps/2/tasks', 'minItems'],
  ['no step in a case', (f) => { f.cases[0].steps = [] }, '/cases/0/steps', 'minItems'],
  ['no case', (f) => { f.cases = [] }, '/cases', 'minItems'],
]

describe('case file schema (spec 2.8)', () => {
  it('accepts the valid file', () => {
    expect(validate(validCaseFile())).toEqual([])
  })

  it('accepts null for every nullable field of a FAIL step and its task', () => {
    const f = broken((f) => {
      const s = f.cases[0].steps[2]
      for (const k of ['minimumProcessingFps', 'maximumDetectorLatencyMs', 'maximumCriticalPathLatencyMs', 'averageDiscardRate',
        'maximumChannelDiscardRate', 'acceleratorPeakPercent', 'acceleratorMemoryPeakPercent', 'cpuPeakPercent', 'memoryPeakPercent', 'failureReason']) s[k] = null
      for (const k of ['minimumProcessingFps', 'minimumFpsRatio', 'missingRate', 'averageDiscardRate', 'maximumDetectorLatencyMs', 'maximumCriticalPathLatencyMs']) s.tasks[0][k] = null
    })
    expect(validate(f)).toEqual([])
  })

  it('pins the constants: $schema relative reference, schemaVersion 3, product title', () => {
    const f = validCaseFile()
    expect(f.$schema).toBe('./capacity-cases.schema.json')
    expect(CASE_SCHEMA_REF.startsWith('./')).toBe(true)
    expect(f.schemaVersion).toBe(3)
    expect(f.benchmark).toBe(BENCHMARK_TITLE)
  })

  it.each(schemaCases)('rejects %s', (_name, mutate, pointer, rule) => {
    expect(pointersAndRules(broken(mutate))).toEqual([{ pointer, rule }])
  })

  it('names the field and the rule in the printed line', () => {
    const [v] = validate(broken((f) => { f.cases[1].steps[0].tasks.push({ ...f.cases[1].steps[0].tasks[0] }) }))
    expect(formatViolation(v!)).toBe('/cases/1/steps/0/tasks [maxItems] must NOT have more than 2 items')
    const [w] = validate(broken((f) => { delete f.gates.minFpsRatio }))
    expect(formatViolation(w!)).toBe('/gates/minFpsRatio [required] required property "minFpsRatio" is missing')
  })

  it('reports every violation of a file at once', () => {
    const f = broken((f) => { f.schemaVersion = 2; f.extra = 1; f.cases[0].steps[0].tasks[0].name = 'x' })
    expect(pointersAndRules(f)).toEqual(expect.arrayContaining([
      { pointer: '/schemaVersion', rule: 'enum' },
      { pointer: '/extra', rule: 'additionalProperties' },
      { pointer: '/cases/0/steps/0/tasks/0/name', rule: 'enum' },
    ]))
    expect(validate(f)).toHaveLength(3)
  })

  it('rejects a document that is not an object', () => {
    expect(pointersAndRules([])).toEqual([{ pointer: '', rule: 'type' }])
    expect(pointersAndRules('case')).toEqual([{ pointer: '', rule: 'type' }])
  })
})
