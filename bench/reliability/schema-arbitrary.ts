import fc from 'fast-check'

/** The JSON Schema subset the handlers' TypeBox input schemas use (see `input:` in functions/). */
export interface Schema {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  patternProperties?: Record<string, Schema>
  anyOf?: Schema[]
  const?: unknown
  enum?: unknown[]
  items?: Schema
  minItems?: number
  maxItems?: number
  uniqueItems?: boolean
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
}

// Long strings and lists make requests big without finding more: valid values stay short.
const CAP = 64

function stringArbitrary(s: Schema): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0
  const maxLength = Math.min(s.maxLength ?? CAP, Math.max(minLength, CAP))
  const within = (v: string) => v.length >= minLength && v.length <= (s.maxLength ?? Infinity)
  if (s.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString())
  if (s.format === 'uuid') return fc.uuid()
  if (s.format === 'uri' || s.format === 'url') return fc.webUrl()
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter(within)
  return fc.string({ minLength, maxLength, unit: 'grapheme' }).filter(within)
}

function numberArbitrary(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : Number.EPSILON) : -1e6)
  const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integer ? 1 : Number.EPSILON) : 1e6)
  if (integer) return fc.integer({ min: Math.ceil(Math.max(min, Number.MIN_SAFE_INTEGER)), max: Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER)) })
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true })
}

/** An arbitrary of values valid against `s`. */
export function valid(s: Schema): fc.Arbitrary<unknown> {
  if ('const' in s) return fc.constant(s.const)
  if (s.enum) return fc.constantFrom(...s.enum)
  if (s.anyOf) return fc.oneof(...s.anyOf.map(valid))
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case 'string': return stringArbitrary(s)
    case 'integer': return numberArbitrary(s, true)
    case 'number': return numberArbitrary(s, false)
    case 'boolean': return fc.boolean()
    case 'null': return fc.constant(null)
    case 'array': {
      const item = valid(s.items ?? {})
      const constraints = { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 8, Math.max(s.minItems ?? 0, 8)) }
      return s.uniqueItems ? fc.uniqueArray(item, { ...constraints, selector: (v) => JSON.stringify(v) }) : fc.array(item, constraints)
    }
    case 'object': {
      const properties = s.properties ?? {}
      const required = new Set(s.required ?? [])
      const record = fc.record(
        Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, valid(v)])),
        { requiredKeys: Object.keys(properties).filter((k) => required.has(k)) },
      )
      const [pattern, patternSchema] = Object.entries(s.patternProperties ?? {})[0] ?? []
      if (pattern === undefined || patternSchema === undefined) return record
      const extra = fc.dictionary(fc.stringMatching(new RegExp(pattern)).filter((k) => k.length <= 64), valid(patternSchema), { maxKeys: 3 })
      return fc.tuple(record, extra).map(([a, b]) => ({ ...b, ...a }))
    }
    default: return fc.jsonValue({ maxDepth: 2 })
  }
}

/** Values of the wrong JSON type for `s`, or outside its bounds. */
export function invalid(s: Schema): fc.Arbitrary<unknown> {
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  const wrongType = fc.constantFrom<unknown>(null, true, 0, -1, '', 'x', [], {}, [null], { a: 1 }, '1', 'true', 'null')
    .filter((v) => type === undefined || jsonType(v) !== type && !(type === 'number' && jsonType(v) === 'integer'))
  const out: fc.Arbitrary<unknown>[] = [wrongType, hugeNumbers]
  if (type === 'string') {
    if (s.maxLength !== undefined) out.push(fc.constant('a'.repeat(s.maxLength + 1)), fc.constant('€'.repeat(s.maxLength + 1)))
    if (s.minLength) out.push(fc.constant('a'.repeat(s.minLength - 1)))
  }
  if (type === 'integer' || type === 'number') {
    if (s.maximum !== undefined) out.push(fc.constant(s.maximum + 1))
    if (s.minimum !== undefined) out.push(fc.constant(s.minimum - 1))
    if (type === 'integer') out.push(fc.constantFrom(0.5, 1.0000001, -0.5))
    out.push(fc.constantFrom('1', '1e3', '0x10', ' 1'))
  }
  if (type === 'array') {
    if (s.maxItems !== undefined) out.push(fc.constant(Array.from({ length: s.maxItems + 1 }, () => null)))
    if (s.items) out.push(invalid(s.items).map((v) => [v]))
  }
  if (type === 'object' && s.properties) {
    const keys = Object.keys(s.properties)
    if (keys.length) out.push(fc.constantFrom(...keys).chain((k) => invalid(s.properties![k]!).map((v) => ({ [k]: v }))))
  }
  return fc.oneof(...out)
}

function jsonType(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

export const hugeNumbers = fc.constantFrom(1e20, 1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 5e-324, -0, 1.7976931348623157e308)

/** Unicode that breaks naive code: controls, NUL, bidi overrides, astral and combining characters, path and SQL syntax. */
export const nastyStrings = fc.oneof(
  fc.constantFrom(
    '\u0000', 'a\u0000b', '\u202e\u202d', '\ufeff', '\uffff', '\ud83d\ude00'.repeat(40), 'e\u0301'.repeat(50), '\u0085\u2028\u2029',
    '../../../../etc/passwd', '/etc/passwd', 'C:\\Windows\\win.ini', "' OR 1=1 --", '"; DROP TABLE accounts; --', '%00', '${jndi:x}',
    '<script>alert(1)</script>', '{{constructor.constructor("x")()}}', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty',
  ),
  fc.string({ unit: 'binary', maxLength: 64 }),
)

/** A value nested `depth` levels deep (objects or arrays). */
export function nested(depth: number, kind: 'object' | 'array'): unknown {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = kind === 'object' ? { a: value } : [value]
  return value
}
