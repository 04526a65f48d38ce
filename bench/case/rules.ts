import { CASE_SCHEMA_VERSION, CASE_SCHEMA_VERSION_NO_PASS, type BoundaryKind, type Outcome, type TaskName, type Workload } from './constants.ts'
import { gateMisses } from './gates.ts'
import type { CaseFile, CaseRecord, Gates } from './schema.ts'

/**
 * Cross-field rules of the case file: what spec 2.8 requires but a JSON Schema
 * cannot state. Each rule has an id (printed with its violations), the sentence it enforces
 * and the reason it certainly holds. Rules run only on parts that already pass the schema.
 */

export interface Violation {
  /** RFC 6901 JSON pointer into the case file. */
  pointer: string
  /** Schema keyword (`required`, `enum`, ...) or cross-field rule id (`case-count`, ...). */
  rule: string
  message: string
}

export interface FileRule {
  id: string
  statement: string
  check(file: CaseFile): Violation[]
}

export interface CaseRule {
  id: string
  statement: string
  check(c: CaseRecord, at: string, gates: Gates): Violation[]
}

const isBlocked = (result: string) => result === 'FAIL' || result === 'STOP'

/**
 * Outcome ↔ boundary kind. spec 2.8: the run stops at the first failing step
 * (`performance-stop`) or at the channel ceiling (`lower-bound`), or reports `setup-blocked`
 * with `binding-blocked`/`storage-blocked`. A `completed` run has no FAIL step, so it cannot
 * be a performance stop: completed ↔ lower-bound, stopped ↔ performance-stop.
 */
export const BOUNDARY_KINDS_BY_OUTCOME: Record<Outcome, readonly BoundaryKind[]> = {
  completed: ['lower-bound'],
  stopped: ['performance-stop'],
  'setup-blocked': ['binding-blocked', 'storage-blocked'],
}

/** spec 2.8: a workload runs these tasks, one each; `concurrent-mixed` runs both side by side. */
export const TASKS_BY_WORKLOAD: Record<Workload, readonly TaskName[]> = {
  'person-detector': ['person-detector'],
  'no-safety-helmet-analysis': ['no-safety-helmet-analysis'],
  'concurrent-mixed': ['person-detector', 'no-safety-helmet-analysis'],
}

export const FILE_RULES: readonly FileRule[] = [
  {
    id: 'case-count',
    statement: 'caseCount equals the number of cases (spec 2.8).',
    check: (f) => f.caseCount === f.cases.length ? [] : [{
      pointer: '/caseCount', rule: 'case-count',
      message: `caseCount is ${f.caseCount} but cases has ${f.cases.length} item(s)`,
    }],
  },
  {
    id: 'case-id-unique',
    statement: 'caseId identifies one case: no two cases share it.',
    check: (f) => f.cases.flatMap((c, i) => {
      const first = f.cases.findIndex((o) => o.caseId === c.caseId)
      return first === i ? [] : [{
        pointer: `/cases/${i}/caseId`, rule: 'case-id-unique',
        message: `caseId "${c.caseId}" is already used by /cases/${first}`,
      }]
    }),
  },
  {
    id: 'version-last-passing',
    statement: 'schemaVersion 3 (spec 2.8) types lastPassingChannels integer >= 1: a case with null needs schemaVersion 4.',
    check: (f) => f.schemaVersion !== CASE_SCHEMA_VERSION ? [] : f.cases.flatMap((c, i) => c.lastPassingChannels !== null ? [] : [{
      pointer: `/cases/${i}/lastPassingChannels`, rule: 'version-last-passing',
      message: `lastPassingChannels is null, which schemaVersion ${CASE_SCHEMA_VERSION} does not allow (use schemaVersion ${CASE_SCHEMA_VERSION_NO_PASS})`,
    }]),
  },
]

export const CASE_RULES: readonly CaseRule[] = [
  {
    id: 'steps-ascending',
    statement: 'The runner steps the channel count up: steps are in strictly increasing channels.',
    check: (c, at) => c.steps.flatMap((s, i) => i === 0 || s.channels > c.steps[i - 1]!.channels ? [] : [{
      pointer: `${at}/steps/${i}/channels`, rule: 'steps-ascending',
      message: `step channels ${s.channels} must be greater than the previous step's ${c.steps[i - 1]!.channels}`,
    }]),
  },
  {
    id: 'steps-within-configured',
    statement: 'No step runs more channels than configuredChannels.',
    check: (c, at) => c.steps.flatMap((s, i) => s.channels <= c.configuredChannels ? [] : [{
      pointer: `${at}/steps/${i}/channels`, rule: 'steps-within-configured',
      message: `step channels ${s.channels} exceed configuredChannels ${c.configuredChannels}`,
    }]),
  },
  {
    id: 'stop-at-first-blocked',
    statement: 'The run stops at its first FAIL or STOP step: no step follows one (spec 2.8).',
    check: (c, at) => {
      const first = c.steps.findIndex((s) => isBlocked(s.result))
      return first === -1 || first === c.steps.length - 1 ? [] : [{
        pointer: `${at}/steps/${first + 1}`, rule: 'stop-at-first-blocked',
        message: `step follows the ${c.steps[first]!.result} step /steps/${first}; the run stops at its first FAIL or STOP step`,
      }]
    },
  },
  {
    id: 'last-passing-channels',
    statement: 'lastPassingChannels is the largest channels of a PASS step, null when no step passed.',
    check: (c, at) => {
      const passing = c.steps.filter((s) => s.result === 'PASS').map((s) => s.channels)
      if (passing.length === 0) {
        return c.lastPassingChannels === null ? [] : [{ pointer: `${at}/lastPassingChannels`, rule: 'last-passing-channels',
          message: `lastPassingChannels is ${c.lastPassingChannels} but no step has result PASS, so it must be null` }]
      }
      const largest = Math.max(...passing)
      return c.lastPassingChannels === largest ? [] : [{
        pointer: `${at}/lastPassingChannels`, rule: 'last-passing-channels',
        message: `lastPassingChannels is ${c.lastPassingChannels} but the largest channels of a PASS step is ${largest}`,
      }]
    },
  },
  {
    id: 'first-blocked-channels',
    statement: "firstBlockedChannels is the first FAIL/STOP step's channels, or null when there is none.",
    check: (c, at) => {
      const expected = c.steps.find((s) => isBlocked(s.result))?.channels ?? null
      return c.firstBlockedChannels === expected ? [] : [{
        pointer: `${at}/firstBlockedChannels`, rule: 'first-blocked-channels',
        message: `firstBlockedChannels is ${c.firstBlockedChannels} but ${expected === null ? 'no step is FAIL or STOP, so it must be null' : `the first FAIL/STOP step has channels ${expected}`}`,
      }]
    },
  },
  {
    id: 'completed-no-fail',
    statement: 'A completed outcome has no FAIL step (spec 2.8).',
    check: (c, at) => c.outcome !== 'completed' ? [] : c.steps.flatMap((s, i) => s.result !== 'FAIL' ? [] : [{
      pointer: `${at}/steps/${i}/result`, rule: 'completed-no-fail',
      message: 'outcome is completed but this step is FAIL',
    }]),
  },
  {
    id: 'outcome-boundary',
    statement: 'boundaryKind fits the outcome: completed → lower-bound; stopped → performance-stop; setup-blocked → binding-blocked or storage-blocked.',
    check: (c, at) => {
      const allowed = BOUNDARY_KINDS_BY_OUTCOME[c.outcome]
      return allowed.includes(c.boundaryKind) ? [] : [{
        pointer: `${at}/boundaryKind`, rule: 'outcome-boundary',
        message: `boundaryKind ${c.boundaryKind} does not fit outcome ${c.outcome} (allowed: ${allowed.join(', ')})`,
      }]
    },
  },
  {
    id: 'performance-stop-has-fail',
    statement: 'A performance-stop boundary is a step that failed its gates: some step is FAIL.',
    check: (c, at) => c.boundaryKind !== 'performance-stop' || c.steps.some((s) => s.result === 'FAIL') ? [] : [{
      pointer: `${at}/boundaryKind`, rule: 'performance-stop-has-fail',
      message: 'boundaryKind is performance-stop but no step is FAIL',
    }],
  },
  {
    id: 'setup-blocked-reason',
    statement: 'A setup-blocked outcome reports its reason: blockedReason is a non-empty string (spec 2.8).',
    check: (c, at) => c.outcome !== 'setup-blocked' || (c.blockedReason ?? '').trim() !== '' ? [] : [{
      pointer: `${at}/blockedReason`, rule: 'setup-blocked-reason',
      message: 'outcome is setup-blocked but blockedReason is empty or null',
    }],
  },
  {
    id: 'workload-tasks',
    statement: 'Each step runs exactly the tasks of the workload (concurrent-mixed: both, once each).',
    check: (c, at) => {
      const expected = [...TASKS_BY_WORKLOAD[c.workload]].sort()
      return c.steps.flatMap((s, i) => {
        const names = s.tasks.map((t) => t.name).sort()
        return JSON.stringify(names) === JSON.stringify(expected) ? [] : [{
          pointer: `${at}/steps/${i}/tasks`, rule: 'workload-tasks',
          message: `workload ${c.workload} runs tasks [${expected.join(', ')}] but this step has [${names.join(', ')}]`,
        }]
      })
    },
  },
  {
    id: 'pass-meets-gates',
    statement: 'A PASS step meets every gate (a null task measurement of a gated figure is a miss).',
    check: (c, at, gates) => c.steps.flatMap((s, i) => s.result !== 'PASS' ? []
      : gateMisses(s, gates).map((m) => ({
        pointer: `${at}/steps/${i}${m.pointer}`, rule: 'pass-meets-gates',
        message: `PASS step: ${m.message}`,
      }))),
  },
  {
    id: 'pass-no-failure-reason',
    statement: 'A PASS step has no failureReason (null).',
    check: (c, at) => c.steps.flatMap((s, i) => s.result !== 'PASS' || s.failureReason === null ? [] : [{
      pointer: `${at}/steps/${i}/failureReason`, rule: 'pass-no-failure-reason',
      message: `PASS step carries failureReason "${s.failureReason}"; it must be null`,
    }]),
  },
]
