import { Ajv, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { invalidParam } from '../errors/index.ts'
import { precompiled } from './precompiled.ts'

/**
 * The project's one JSON-schema validator (ajv + ajv-formats): request input, pipeline
 * manifests, upgrade package manifests, benchmark case files and reports all compile and
 * report through here.
 *
 * Two configured instances:
 * - `draft-07` (default): TypeBox schemas; `useDefaults` fills request defaults, types are
 *   never coerced, unknown keywords are tolerated (`strict: false`).
 * - `2020-12`: schemas written for draft 2020-12 (the benchmark case file of spec 2.8 declares
 *   it); `strict` so that a schema mistake is a compile error, union types allowed.
 */
export type SchemaDialect = 'draft-07' | '2020-12'

/** One schema violation; `pointer` names the offending field itself ('' = the whole value). */
export interface SchemaIssue {
  pointer: string
  /** The schema keyword that failed (`required`, `type`, `enum`, …). */
  keyword: string
  message: string
}

// ajv-formats is CommonJS; under NodeNext its plugin sits on the default export's `.default`.
const addFormats = (addFormatsModule as unknown as { default: typeof addFormatsModule.default }).default

interface Instance {
  ajv: Ajv | Ajv2020
  compiled: WeakMap<object, ValidateFunction>
}
const instances = new Map<SchemaDialect, Instance>()

/**
 * A configured ajv of `dialect`. `code` is ajv's code option: the build passes `{ source: true }`
 * to generate the same validators as standalone code (runtime/schema/precompile.ts).
 */
export function createAjv(dialect: SchemaDialect, code?: { source?: boolean; esm?: boolean }): Ajv | Ajv2020 {
  const extra = code ? { code } : {}
  const ajv = dialect === '2020-12'
    ? new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, ...extra })
    : new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: true, ...extra })
  addFormats(ajv)
  return ajv
}

// Built on first use: the server never pays for the 2020-12 meta-schema.
function instance(dialect: SchemaDialect): Instance {
  let entry = instances.get(dialect)
  if (!entry) {
    const ajv = createAjv(dialect)
    entry = { ajv, compiled: new WeakMap() }
    instances.set(dialect, entry)
  }
  return entry
}

/**
 * The validate function of `schema`, compiled once per schema object; generated at build time
 * for the schemas every start validates (./precompiled.ts), which then need no ajv instance.
 */
export function compileSchema<T = unknown>(schema: AnySchemaObject, dialect: SchemaDialect = 'draft-07'): ValidateFunction<T> {
  const built = precompiled[dialect].get(schema)
  if (built) return built as ValidateFunction<T>
  const { ajv, compiled } = instance(dialect)
  let validate = compiled.get(schema)
  if (!validate) {
    validate = ajv.compile(schema)
    compiled.set(schema, validate)
  }
  return validate as ValidateFunction<T>
}

const escapeToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1')

/** ajv errors as issues: a missing or unknown property is reported at its own pointer. */
export function schemaIssues(errors: readonly ErrorObject[] | null | undefined): SchemaIssue[] {
  return (errors ?? []).map((e) => {
    if (e.keyword === 'required') {
      const name = String((e.params as { missingProperty: string }).missingProperty)
      return { pointer: `${e.instancePath}/${escapeToken(name)}`, keyword: e.keyword, message: `required property "${name}" is missing` }
    }
    if (e.keyword === 'additionalProperties') {
      const name = String((e.params as { additionalProperty: string }).additionalProperty)
      return { pointer: `${e.instancePath}/${escapeToken(name)}`, keyword: e.keyword, message: `must NOT have additional properties: "${name}" is unknown` }
    }
    const params = e.params as { allowedValues?: unknown[]; allowedValue?: unknown }
    const detail = params.allowedValues ? `: ${params.allowedValues.join(', ')}`
      : e.keyword === 'const' ? ` ${JSON.stringify(params.allowedValue)}` : ''
    return { pointer: e.instancePath, keyword: e.keyword, message: `${e.message ?? 'is invalid'}${detail}` }
  })
}

/** `<pointer> <message>`, the whole value shown as `/`. */
export function formatIssue(issue: SchemaIssue): string {
  return `${issue.pointer || '/'} ${issue.message}`
}

/** Every issue of `value` against `schema`; empty when it is valid. */
export function checkSchema(schema: AnySchemaObject, value: unknown, dialect: SchemaDialect = 'draft-07'): SchemaIssue[] {
  const validate = compileSchema(schema, dialect)
  return validate(value) ? [] : schemaIssues(validate.errors)
}

/** Upper bound on the issues listed in an InvalidParam's `details.errors`. */
const MAX_LISTED_ISSUES = 20

/**
 * Request input (draft-07, defaults filled in place). A bad field is api.error.InvalidParam
 * naming it as a JSON pointer (`/pageNum`): the first issue as `field` and `reason`, and
 * when there are more, all of them (up to 20) in `errors`.
 */
export function validateInput<T>(schema: AnySchemaObject, value: unknown): T {
  const issues = checkSchema(schema, value)
  if (issues.length === 0) return value as T
  const field = (i: SchemaIssue) => ({ field: i.pointer || '/', reason: i.message })
  const first = field(issues[0]!)
  throw invalidParam(first.field, first.reason, issues.length > 1 ? { errors: issues.slice(0, MAX_LISTED_ISSUES).map(field) } : {})
}
