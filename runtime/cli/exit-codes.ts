import { DeviceError, NetworkError } from '../client/errors.ts'

/** Exit codes of device-cli: integrators' scripts branch on these. */
export const EXIT = {
  OK: 0,
  /** Anything unexpected (a bug, a local file that cannot be read). */
  FAILURE: 1,
  /** Wrong command line: unknown command or option, missing argument, bad value. */
  USAGE: 2,
  /** The device answered with a failure (resCode 0, HTTP 4xx/5xx): see messageKey and recommendedAction. */
  DEVICE: 3,
  /** The device (or the broker, or one device of a fleet command) could not be reached or the connection broke. */
  NETWORK: 4,
} as const

export class UsageError extends Error {
  readonly name = 'UsageError'
}

/** The MQTT broker of the fleet commands could not be reached or refused the client. */
export class BrokerError extends Error {
  readonly name = 'BrokerError'
}

export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.USAGE
  if (error instanceof DeviceError) return EXIT.DEVICE
  if (error instanceof NetworkError || error instanceof BrokerError) return EXIT.NETWORK
  return EXIT.FAILURE
}
