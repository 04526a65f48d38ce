/** shared/schema/validate.ts: the one JSON-schema validator (compile cache, dialects, issues, InvalidParam). */
import { Type } from '@sinclair/typebox'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../shared/errors/index.ts'
import { checkSchema, compileSchema, formatIssue, validateInput } from '../../shared/schema/validate.ts'

const Page = Type.Object({
  pageNum: Type.Integer({ minimum: 1 }),
  pageSize: Type.Integer({ minimum: 1, default: 10 }),
  kind: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
  at: Type.Optional(Type.String({ format: 'date-time' })),
}, { additionalProperties: false })

const thrown = (fn: () => unknown): ApiError => {
  try { fn() } catch (error) { return error as ApiError }
  throw new Error('did not throw')
}

describe('compileSchema', () => {
  it('compiles a schema object once per dialect', () => {
    expect(compileSchema(Page)).toBe(compileSchema(Page))
    expect(compileSchema(Page, '2020-12')).not.toBe(compileSchema(Page))
    // an equal but distinct object is its own cache entry
    expect(compileSchema({ ...Page })).not.toBe(compileSchema(Page))
  })

  it('draft-07 tolerates unknown keywords; 2020-12 is strict and knows its own keywords', () => {
    const odd = { type: 'string', 'x-note': 'vendor keyword' }
    expect(checkSchema(odd, 'text')).toEqual([])
    expect(() => compileSchema(odd, '2020-12')).toThrow(/unknown keyword/)
    // dependentRequired is a 2019-09/2020-12 keyword: draft-07 ignores it
    const paired = { type: 'object', dependentRequired: { width: ['height'] } }
    expect(checkSchema(paired, { width: 1 })).toEqual([])
    expect(checkSchema(paired, { width: 1 }, '2020-12')).toEqual([{ pointer: '', keyword: 'dependentRequired', message: 'must have property height when property width is present' }])
    expect(checkSchema(paired, { width: 1, height: 2 }, '2020-12')).toEqual([])
  })
})

describe('checkSchema', () => {
  it('names a missing or unknown property at its own (escaped) pointer', () => {
    expect(checkSchema(Page, { pageSize: 5, 'x/y~z': 1 })).toEqual([
      { pointer: '/pageNum', keyword: 'required', message: 'required property "pageNum" is missing' },
      { pointer: '/x~1y~0z', keyword: 'additionalProperties', message: 'must NOT have additional properties: "x/y~z" is unknown' },
    ])
  })

  it('lists allowed values of enum and const, checks formats, never coerces types', () => {
    expect(checkSchema({ enum: ['on', 'off'] }, 'dim')).toEqual([{ pointer: '', keyword: 'enum', message: 'must be equal to one of the allowed values: on, off' }])
    expect(checkSchema({ const: 3 }, 2).map(formatIssue)).toEqual(['/ must be equal to constant 3'])
    expect(checkSchema(Page, { pageNum: '1', at: 'yesterday' }).map(formatIssue)).toEqual(['/pageNum must be integer', '/at must match format "date-time"'])
  })

  it('fills defaults in place (draft-07)', () => {
    const input: Record<string, unknown> = { pageNum: 2 }
    expect(checkSchema(Page, input)).toEqual([])
    expect(input).toEqual({ pageNum: 2, pageSize: 10 })
  })
})

describe('validateInput', () => {
  it('returns the valid input with its defaults', () => {
    expect(validateInput(Page, { pageNum: 1, kind: 'b' })).toEqual({ pageNum: 1, pageSize: 10, kind: 'b' })
  })

  it('throws InvalidParam with the first issue as field and reason', () => {
    const error = thrown(() => validateInput(Page, { pageNum: 0 }))
    expect(error).toBeInstanceOf(ApiError)
    expect(error.item).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/pageNum', reason: 'must be >= 1' } })
    expect(error.item.details).not.toHaveProperty('errors')
    expect(thrown(() => validateInput(Page, 'text')).item.details).toEqual({ field: '/', reason: 'must be object' })
  })

  it('lists every issue, up to 20, when there are several', () => {
    expect(thrown(() => validateInput(Page, { pageNum: 0, kind: 'c' })).item.details).toMatchObject({
      field: '/pageNum',
      errors: [{ field: '/pageNum', reason: 'must be >= 1' }, { field: '/kind', reason: 'must be equal to constant "a"' }, { field: '/kind', reason: 'must be equal to constant "b"' }, { field: '/kind', reason: 'must match a schema in anyOf' }],
    })
    const wide = Type.Object({}, { additionalProperties: false })
    const details = thrown(() => validateInput(wide, Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`p${i}`, i])))).item.details
    expect(details.errors).toHaveLength(20)
  })
})
