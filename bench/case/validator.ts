import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { CASE_RULES, FILE_RULES, type Violation } from './rules.ts'
import { CaseFileSchema, CaseSchema, GatesSchema, type CaseFile, type CaseRecord, type Gates } from './schema.ts'

export type { Violation } from './rules.ts'

// ajv-formats is CommonJS; under NodeNext its plugin sits on the default export's `.default`.
const addFormats = (addFormatsModule as unknown as { default: typeof addFormatsModule.default }).default

export interface CaseFileValidator {
  /** Every violation of the schema and of the cross-field rules; empty when the file is valid. */
  (file: unknown): Violation[]
}

const escapeToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1')

/** One ajv error as a violation whose pointer names the offending field itself. */
function toViolation(e: ErrorObject): Violation {
  if (e.keyword === 'required') {
    const name = String((e.params as { missingProperty: string }).missingProperty)
    return { pointer: `${e.instancePath}/${escapeToken(name)}`, rule: 'required', message: `required property "${name}" is missing` }
  }
  if (e.keyword === 'additionalProperties') {
    const name = String((e.params as { additionalProperty: string }).additionalProperty)
    return { pointer: `${e.instancePath}/${escapeToken(name)}`, rule: 'additionalProperties', message: `unknown property "${name}" is not allowed` }
  }
  const params = e.params as { allowedValues?: unknown[]; allowedValue?: unknown }
  const detail = params.allowedValues ? `: ${params.allowedValues.join(', ')}`
    : e.keyword === 'const' ? ` ${JSON.stringify(params.allowedValue)}` : ''
  return { pointer: e.instancePath, rule: e.keyword, message: `${e.message ?? 'is invalid'}${detail}` }
}

/**
 * Builds the case-file validator (spec 2.8): the draft 2020-12 schema compiled with ajv
 * (+ ajv-formats for `evidenceDate`), then the cross-field rules of `rules.ts` on every part
 * that passes the schema, so one run reports every violation it can.
 */
export function createCaseFileValidator(): CaseFileValidator {
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true })
  addFormats(ajv, ['date'])
  const validateFile = ajv.compile(CaseFileSchema) as ValidateFunction<CaseFile>
  const validateCase = ajv.compile({ ...CaseSchema }) as ValidateFunction<CaseRecord>
  const validateGates = ajv.compile({ ...GatesSchema }) as ValidateFunction<Gates>

  return (file: unknown): Violation[] => {
    if (validateFile(file)) return crossFieldViolations(file)
    const violations = (validateFile.errors ?? []).map(toViolation)
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
