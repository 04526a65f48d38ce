import { invalidParam } from '../../shared/errors/index.ts'
import { adapterConfigProblem } from '../../shared/network/check.ts'
import type { AdapterConfig } from '../../shared/network/schemas.ts'

/**
 * Checks an adapter change before anything is touched (spec 4.10 Network; the checks are in
 * ./check.ts, shared with the console). Throws InvalidParam naming the field.
 */
export function validateAdapterConfig(config: AdapterConfig): void {
  const found = adapterConfigProblem(config)
  if (found) throw invalidParam(found.field, found.reason, found.extra)
}
