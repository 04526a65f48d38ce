import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { TSchema } from '@sinclair/typebox'
import { invalidParam } from '../../shared/errors/index.ts'

/**
 * Input validation with ajv. A bad field becomes api.error.InvalidParam naming the field
 * as a JSON pointer (`/pageNum`); the first error is reported, the rest in details.
 */
export class InputValidator {
  private readonly ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: true })
  private readonly compiled = new WeakMap<TSchema, ValidateFunction>()

  constructor() {
    ;(addFormats as unknown as (ajv: Ajv) => void)(this.ajv)
  }

  validate<T>(schema: TSchema, value: unknown): T {
    let validate = this.compiled.get(schema)
    if (!validate) {
      validate = this.ajv.compile(schema)
      this.compiled.set(schema, validate)
    }
    if (validate(value)) return value as T
    const errors = validate.errors ?? []
    const describe = (e: (typeof errors)[number]) => {
      const missing = e.keyword === 'required' ? `/${(e.params as { missingProperty: string }).missingProperty}` : ''
      const extra = e.keyword === 'additionalProperties' ? `/${(e.params as { additionalProperty: string }).additionalProperty}` : ''
      return { field: `${e.instancePath}${missing}${extra}` || '/', reason: e.message ?? e.keyword }
    }
    const first = describe(errors[0]!)
    throw invalidParam(first.field, first.reason, errors.length > 1 ? { errors: errors.slice(0, 20).map(describe) } : {})
  }
}
