import { existsSync, writeFileSync } from 'node:fs'

/** libfaketime of Debian's faketime package (test/provision.mjs). */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1'

export const hasFaketime = (): boolean => existsSync(LIBFAKETIME)

/**
 * The environment that runs a device (and every process it starts) under libfaketime with its
 * wall-clock offset read from `offsetFile` on every call, the monotonic clock left real
 * (docs/system.md "Clocks"). `step(offsetFile, '+3h')` steps that wall clock at once, as an NTP
 * sync of a box without a battery-backed clock does; the file starts at "+0".
 */
export function faketimeEnv(offsetFile: string): Record<string, string> {
  writeFileSync(offsetFile, '+0\n')
  return { LD_PRELOAD: LIBFAKETIME, FAKETIME_TIMESTAMP_FILE: offsetFile, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' }
}

export function step(offsetFile: string, offset: string): void {
  writeFileSync(offsetFile, `${offset}\n`)
}
