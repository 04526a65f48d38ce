import type { ValidateFunction } from 'ajv'
import type { SchemaDialect } from './validate.ts'

/**
 * Validators generated at build time, by dialect and schema object: compileSchema
 * (./validate.ts) uses one instead of compiling its schema. The server's bundle gets a
 * generated version of this module (build.mjs, runtime/schema/precompile.ts: ajv's standalone
 * code of the same schemas with the same options); run from source it is empty and every
 * schema compiles at its first use.
 */
export const precompiled: Record<SchemaDialect, ReadonlyMap<object, ValidateFunction>> = {
  'draft-07': new Map(),
  '2020-12': new Map(),
}
