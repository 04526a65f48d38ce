import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { loadConfig, type Config } from '../../shared/config.ts'
import { WEAKEST_SCRYPT } from '../../shared/auth/password.ts'
import type { Clock, Ctx, Identity } from '../../shared/handler.ts'
import { createLogger } from '../../runtime/log.ts'
import { createServices, type RuntimeServices } from '../../runtime/services.ts'
import { Writable } from 'node:stream'

export interface TestRuntime {
  runtime: RuntimeServices
  config: Config
  clock: Clock & { monotonic(): number; set(ms: number): void; advance(ms: number): void }
  /** A ctx as a handler would get it, for the given identity. */
  ctx(identity?: Identity | null, request?: Request | null): Ctx
  close(): Promise<void>
}

/**
 * Real services (a libsql file database with migrations applied, the default account) in a
 * temporary data folder, with an injectable clock: for unit tests that call a handler directly.
 */
export async function createTestRuntime(overrides: Partial<Record<keyof Config, unknown>> = {}): Promise<TestRuntime> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'device-unit-'))
  let now = Date.now()
  let monotonic = 0
  // `advance` is time passing (both clocks); `set` is a wall-clock step (the monotonic clock stays).
  const clock = {
    now: () => now, monotonic: () => monotonic,
    set: (ms: number) => { now = ms }, advance: (ms: number) => { now += ms; monotonic += ms },
  }
  // Tests sign in hundreds of times: the cheapest password hash allowed (the shipped default is OWASP's).
  // A started runtime listens: on free ports only, never the defaults a device beside the suite holds.
  const config = loadConfig({}, {
    dataDir, port: 0, host: '127.0.0.1', wsPort: 0, wsHost: '127.0.0.1',
    initialAdminPassword: 'initial-Passw0rd', passwordScrypt: WEAKEST_SCRYPT, passwordScryptAllowWeak: true, ...overrides,
  })
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() })
  const log = createLogger('silent', sink)
  const runtime = await createServices(config, log, { clock })
  return {
    runtime,
    config,
    clock,
    ctx: (identity = null, request = null) => ({
      ...runtime.handlerServices,
      identity,
      requestId: 'test-request',
      clientAddress: '127.0.0.1',
      localAddress: '127.0.0.1',
      request,
      signal: new AbortController().signal,
    }),
    async close() {
      await runtime.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
