import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { md5Hex } from '../../shared/auth/password.ts'
import DoLogin from '../../functions/login/DoLogin.ts'

const HOUR = 3_600_000
const IDLE = 600_000

// spec 5.3: the mtk idle timeout runs on the monotonic clock while the process runs
// (docs/sign-in-and-errors.md "Sign-in and sessions"): a wall-clock step signs nobody out.
describe('session idle timeout and wall-clock steps (runtime/auth/session-cache.ts)', () => {
  let t: TestRuntime
  beforeEach(async () => { t = await createTestRuntime({ sessionIdleTimeoutMs: IDLE }) })
  afterEach(async () => t.close())

  const signIn = async () => (await DoLogin.handle({ account: 'admin', pwd: md5Hex('initial-Passw0rd') }, t.ctx())).mtk
  const resolve = (mtk: string) => t.runtime.services.sessions.resolve(mtk)

  it('a step forward of 3 h keeps a session in use; idleness still ends it on monotonic time', async () => {
    const mtk = await signIn()
    t.clock.advance(60_000)
    expect(await resolve(mtk)).toMatchObject({ accountName: 'admin' })
    t.clock.set(t.clock.now() + 3 * HOUR)
    expect(await resolve(mtk)).toMatchObject({ accountName: 'admin' })
    t.clock.advance(IDLE + 1) // unused for longer than the idle timeout
    expect(await resolve(mtk)).toBeNull()
  })

  it('a step back of 3 h does not keep an idle session, nor end one in use', async () => {
    const mtk = await signIn()
    t.clock.set(t.clock.now() - 3 * HOUR)
    for (let i = 0; i < 6; i++) {
      t.clock.advance(IDLE / 2)
      expect(await resolve(mtk)).toMatchObject({ accountName: 'admin' })
    }
    t.clock.advance(IDLE + 1)
    expect(await resolve(mtk)).toBeNull()
  })
})
