import type { ValidateFunction } from 'ajv'
import { compileSchema, schemaIssues } from '../../shared/schema/validate.ts'
import { CASE_RULES, FILE_RULES, type Violation } from './rules.ts'
import { CaseFileSchema, CaseSchema, GatesSchema, type CaseFile, type CaseRecord, type Gates } from './schema.ts'

export type { Violation } from './rules.ts'

export interface CaseFileValidator {
  /** Every violation of the schema and of the cross-field rules; empty when the file is valid. */
  (file: unknown): Violation[]
}

/**
 * Builds the case-file validator (spec 2.8): the draft 2020-12 schema compiled by
 * shared/schema/validate.ts (ajv-formats checks `evidenceDate`), then the cross-field rules
 * of `rules.ts` on every part that passes the schema, so one run reports every violation it can.
 */
export function createCaseFileValidator(): CaseFileValidator {
  const validateFile: ValidateFunction<CaseFile> = compileSchema(CaseFileSchema, '2020-12')
  const validateCase: ValidateFunction<CaseRecord> = compileSchema(CaseSchema, '2020-12')
  const validateGates: ValidateFunction<Gates> = compileSchema(GatesSchema, '2020-12')

  return (file: unknown): Violation[] => {
    if (validateFile(file)) return crossFieldViolations(file)
    const violations: Violation[] = schemaIssues(validateFile.errors).map(({ pointer, keyword, message }) => ({ pointer, rule: keyword, message }))
    if (typeof file !== 'object' || file === null || Array.isArray(file)) return violations
    const candidate = file as Partial<Record<keyof CaseFile, unknown>>
    const gatesValid = validateGates(candidate.gates)
    const cases = Array.isArray(candidate.cases) ? candidate.cases : []
    const validCases = cases.map((c, i) => ({ c, i })).filter(({ c }) => validateCase(c))
    for (const { c, i } of validCases) {
      violations.push(...caseViolations(c as CaseRecord, `/cases/${i}`, gatesValid ? candidate.gates as Gates : null))
    }
    // File rules only when the fields they compare are themselves valid.
    const caseCountValid = Number.isInteger(candidate.caseCount) && (candidate.caseCount as number) >= 1
    if (caseCountValid && validCases.length === cases.length && cases.length > 0) {
      violations.push(...FILE_RULES.flatMap((r) => r.check(candidate as CaseFile)))
    }
    return violations
  }
}

function crossFieldViolations(file: CaseFile): Violation[] {
  return [
    ...FILE_RULES.flatMap((r) => r.check(file)),
    ...file.cases.flatMap((c, i) => caseViolations(c, `/cases/${i}`, file.gates)),
  ]
}

/** Case rules; the gate rule needs valid gates and is left out while they are broken. */
function caseViolations(c: CaseRecord, at: string, gates: Gates | null): Violation[] {
  return CASE_RULES
    .filter((r) => gates !== null || r.id !== 'pass-meets-gates')
    .flatMap((r) => r.check(c, at, gates as Gates))
}

/** One line per violation: `<pointer> [<rule>] <message>` (the root pointer shown as `/`). */
export function formatViolation(v: Violation): string {
  return `${v.pointer === '' ? '/' : v.pointer} [${v.rule}] ${v.message}`
}
