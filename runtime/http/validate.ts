import type { TSchema } from '@sinclair/typebox'
import { validateInput } from '../../shared/schema/validate.ts'

/**
 * The request validator the HTTP and MQTT routes share: shared/schema/validate.ts's
 * `validateInput` (a bad field is api.error.InvalidParam naming it as a JSON pointer).
 */
export class InputValidator {
  validate<T>(schema: TSchema, value: unknown): T {
    return validateInput<T>(schema, value)
  }
}
