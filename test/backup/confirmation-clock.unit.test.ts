import { describe, expect, it } from 'vitest'
import { ConfirmationTokens } from '../../runtime/backup/confirmation.ts'

// docs/system.md "Clocks": a confirmation token lives its TTL of real time; a wall-clock step
// moves only the expiresAt shown.
describe('factory-reset confirmation tokens and wall-clock steps', () => {
  const TTL = 60_000
  const HOURS_3 = 3 * 3_600_000

  it('a token taken within its TTL is accepted after the wall clock jumps 3 h forward', () => {
    const clock = { wall: 1_700_000_000_000, mono: 10, now() { return this.wall }, monotonic() { return this.mono } }
    const tokens = new ConfirmationTokens(clock)
    const { token, expiresAt } = tokens.issue('s1', TTL)
    expect(expiresAt).toBe(1_700_000_000_000 + TTL)
    clock.wall += HOURS_3
    clock.mono += 1000
    expect(tokens.take(token, 's1')).toBe('ok')
  })

  it('a token older than its TTL is expired though the wall clock went 3 h back', () => {
    const clock = { wall: 1_700_000_000_000, mono: 10, now() { return this.wall }, monotonic() { return this.mono } }
    const tokens = new ConfirmationTokens(clock)
    const { token } = tokens.issue('s1', TTL)
    clock.wall -= HOURS_3
    clock.mono += TTL
    expect(tokens.take(token, 's1')).toBe('expired')
    // Taken once: gone.
    expect(tokens.take(token, 's1')).toBe('invalid')
  })

  it('the expiresAt shown is the wall clock at issue plus the TTL', () => {
    const clock = { wall: 5_000, mono: 0, now() { return this.wall }, monotonic() { return this.mono } }
    expect(new ConfirmationTokens(clock).issue('s1', TTL).expiresAt).toBe(5_000 + TTL)
  })
})
