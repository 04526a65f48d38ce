import { describe, expect, it } from 'vitest'
import { GATE_RULES } from '../../bench/case/gates.ts'
import { CASE_RULES, FILE_RULES } from '../../bench/case/rules.ts'
import { createCaseFileValidator } from '../../bench/case/validator.ts'
import { brokenCaseFile } from './case-file-fixture.ts'

// Cross-field rules (spec 2.8, bench/case/rules.ts): each row breaks exactly one rule
// of a file that passes the schema and names the one violation expected.
type Mutable = Record<string, any>
const validate = createCaseFileValidator()
const pointersAndRules = (file: unknown) => validate(file).map((v) => ({ pointer: v.pointer, rule: v.rule }))

const broken = brokenCaseFile

const ruleCases: Array<[string, (f: Mutable) => void, string, string]> = [
  ['caseCount above the number of cases', (f) => { f.caseCount = 3 }, '/caseCount', 'case-count'],
  ['caseCount below the number of cases', (f) => { f.caseCount = 1 }, '/caseCount', 'case-count'],
  ['two cases share a caseId', (f) => { f.cases[1].caseId = f.cases[0].caseId }, '/cases/1/caseId', 'case-id-unique'],
  ['steps out of channel order', (f) => { f.cases[1].steps.reverse() }, '/cases/1/steps/1/channels', 'steps-ascending'],
  ['a step above configuredChannels', (f) => { f.cases[1].configuredChannels = 1 }, '/cases/1/steps/1/channels', 'steps-within-configured'],
  ['a step after the first FAIL', (f) => {
    f.cases[0].steps.push({ ...f.cases[0].steps[2], channels: 8 })
  }, '/cases/0/steps/3', 'stop-at-first-blocked'],
  ['lastPassingChannels below the largest PASS step', (f) => { f.cases[0].lastPassingChannels = 1 }, '/cases/0/lastPassingChannels', 'last-passing-channels'],
  ['lastPassingChannels above the largest PASS step', (f) => { f.cases[0].lastPassingChannels = 4 }, '/cases/0/lastPassingChannels', 'last-passing-channels'],
  ['lastPassingChannels with no PASS step', (f) => { f.cases[0].steps = [f.cases[0].steps[2]] }, '/cases/0/lastPassingChannels', 'last-passing-channels'],
  ['lastPassingChannels null with a PASS step', (f) => { f.schemaVersion = 4; f.cases[0].lastPassingChannels = null }, '/cases/0/lastPassingChannels', 'last-passing-channels'],
  ['lastPassingChannels null in a schemaVersion 3 file', (f) => {
    f.cases[0].steps = [f.cases[0].steps[2]]; f.cases[0].lastPassingChannels = null
  }, '/cases/0/lastPassingChannels', 'version-last-passing'],
  ['firstBlockedChannels not the FAIL step', (f) => { f.cases[0].firstBlockedChannels = 2 }, '/cases/0/firstBlockedChannels', 'first-blocked-channels'],
  ['firstBlockedChannels null with a FAIL step', (f) => { f.cases[0].firstBlockedChannels = null }, '/cases/0/firstBlockedChannels', 'first-blocked-channels'],
  ['firstBlockedChannels set with no FAIL/STOP step', (f) => { f.cases[1].firstBlockedChannels = 2 }, '/cases/1/firstBlockedChannels', 'first-blocked-channels'],
  ['completed outcome with a FAIL step', (f) => {
    f.cases[0].outcome = 'completed'; f.cases[0].boundaryKind = 'lower-bound'
  }, '/cases/0/steps/2/result', 'completed-no-fail'],
  ['stopped outcome with a lower-bound boundary', (f) => { f.cases[0].boundaryKind = 'lower-bound' }, '/cases/0/boundaryKind', 'outcome-boundary'],
  ['completed outcome with a storage-blocked boundary', (f) => { f.cases[1].boundaryKind = 'storage-blocked' }, '/cases/1/boundaryKind', 'outcome-boundary'],
  ['setup-blocked outcome with a performance-stop boundary', (f) => {
    f.cases[0].outcome = 'setup-blocked'; f.cases[0].blockedReason = 'camera binding refused'
  }, '/cases/0/boundaryKind', 'outcome-boundary'],
  ['performance-stop without a FAIL step', (f) => { f.cases[0].steps[2].result = 'STOP' }, '/cases/0/boundaryKind', 'performance-stop-has-fail'],
  ['setup-blocked without a reason', (f) => {
    Object.assign(f.cases[0], { outcome: 'setup-blocked', boundaryKind: 'binding-blocked', blockedReason: null })
    f.cases[0].steps[2].result = 'STOP'
  }, '/cases/0/blockedReason', 'setup-blocked-reason'],
  ['setup-blocked with a blank reason', (f) => {
    Object.assign(f.cases[0], { outcome: 'setup-blocked', boundaryKind: 'storage-blocked', blockedReason: '  ' })
    f.cases[0].steps[2].result = 'STOP'
  }, '/cases/0/blockedReason', 'setup-blocked-reason'],
  ['a person-detector step running the helmet task', (f) => {
    f.cases[0].steps[0].tasks[0].name = 'no-safety-helmet-analysis'
  }, '/cases/0/steps/0/tasks', 'workload-tasks'],
  ['a concurrent-mixed step with one task', (f) => { f.cases[1].steps[1].tasks.pop() }, '/cases/1/steps/1/tasks', 'workload-tasks'],
  ['a concurrent-mixed step running person-detector twice', (f) => {
    f.cases[1].steps[0].tasks[1].name = 'person-detector'
  }, '/cases/1/steps/0/tasks', 'workload-tasks'],
  ['a PASS step with a failureReason', (f) => { f.cases[0].steps[1].failureReason = 'slow' }, '/cases/0/steps/1/failureReason', 'pass-no-failure-reason'],
]

/** For each gate, a task value on the wrong side of the fixture's gate. */
const beyondGate = { minimumFpsRatio: 0.9, missingRate: 0.02, averageDiscardRate: 0.06, maximumCriticalPathLatencyMs: 1001, maximumDetectorLatencyMs: 501 }

describe('case file cross-field rules', () => {
  it.each(ruleCases)('rejects %s', (_name, mutate, pointer, rule) => {
    expect(pointersAndRules(broken(mutate))).toEqual([{ pointer, rule }])
  })

  it('accepts a setup-blocked case with its reason and a STOP step', () => {
    const f = broken((f) => {
      Object.assign(f.cases[0], { outcome: 'setup-blocked', boundaryKind: 'binding-blocked', blockedReason: 'no free camera binding at 4 channels' })
      f.cases[0].steps[2].result = 'STOP'
    })
    expect(validate(f)).toEqual([])
  })

  it('accepts a schemaVersion 4 case that was setup-blocked at its first step, lastPassingChannels null', () => {
    const f = broken((f) => {
      f.schemaVersion = 4
      Object.assign(f.cases[0], { outcome: 'setup-blocked', boundaryKind: 'binding-blocked', blockedReason: 'helmet-classifier not installed', lastPassingChannels: null, firstBlockedChannels: 4 })
      f.cases[0].steps = [{ ...f.cases[0].steps[2], result: 'STOP' }]
    })
    expect(validate(f)).toEqual([])
  })

  it.each(GATE_RULES.map((g) => [g.gate, g.taskField] as const))('rejects a PASS step whose task misses gate %s', (gate, field) => {
    const f = broken((f) => { f.cases[1].steps[1].tasks[1][field] = beyondGate[field] })
    const violations = validate(f)
    expect(violations.map((v) => ({ pointer: v.pointer, rule: v.rule }))).toEqual([
      { pointer: `/cases/1/steps/1/tasks/1/${field}`, rule: 'pass-meets-gates' },
    ])
    expect(violations[0]!.message).toContain(gate)
  })

  it.each(GATE_RULES.map((g) => [g.gate, g.taskField] as const))('rejects a PASS step whose task has no %s measurement', (gate, field) => {
    const f = broken((f) => { f.cases[0].steps[0].tasks[0][field] = null })
    const violations = validate(f)
    expect(violations.map((v) => ({ pointer: v.pointer, rule: v.rule }))).toEqual([
      { pointer: `/cases/0/steps/0/tasks/0/${field}`, rule: 'pass-meets-gates' },
    ])
    expect(violations[0]!.message).toContain(`${field} is null`)
  })

  it.each(GATE_RULES.filter((g) => g.stepField !== null).map((g) => [g.gate, g.stepField!] as const))(
    'rejects a PASS step whose step-level figure misses gate %s', (gate, field) => {
      const f = broken((f) => { f.cases[0].steps[1][field] = beyondGate[field] })
      const violations = validate(f)
      expect(violations.map((v) => ({ pointer: v.pointer, rule: v.rule }))).toEqual([
        { pointer: `/cases/0/steps/1/${field}`, rule: 'pass-meets-gates' },
      ])
      expect(violations[0]!.message).toContain(gate)
    })

  it('accepts PASS figures exactly on each gate and null step-level aggregates', () => {
    const f = broken((f) => {
      const s = f.cases[0].steps[0]
      Object.assign(s.tasks[0], { minimumFpsRatio: 0.95, missingRate: 0.01, averageDiscardRate: 0.05, maximumCriticalPathLatencyMs: 1000, maximumDetectorLatencyMs: 500 })
      Object.assign(s, { averageDiscardRate: null, maximumCriticalPathLatencyMs: null, maximumDetectorLatencyMs: null })
    })
    expect(validate(f)).toEqual([])
  })

  it('does not hold a FAIL step to the gates', () => {
    const f = broken((f) => { f.cases[0].steps[2].tasks[0].maximumDetectorLatencyMs = 99_999 })
    expect(validate(f)).toEqual([])
  })

  it('runs cross-field rules on valid cases even when another part breaks the schema', () => {
    const f = broken((f) => { f.scope = 'nope'; f.cases[0].lastPassingChannels = 1 })
    expect(pointersAndRules(f)).toEqual([
      { pointer: '/scope', rule: 'enum' },
      { pointer: '/cases/0/lastPassingChannels', rule: 'last-passing-channels' },
    ])
  })

  it('has a failing example for every rule', () => {
    const covered = new Set(ruleCases.map((c) => c[3]).concat('pass-meets-gates'))
    expect([...FILE_RULES, ...CASE_RULES].map((r) => r.id).filter((id) => !covered.has(id))).toEqual([])
  })
})
