import { describe, expect, it } from 'vitest'
import { StreamTokens } from '../../runtime/auth/stream-tokens.ts'
import type { Identity } from '../../shared/handler.ts'

const identity: Identity = { userId: 'u1', accountName: 'admin', sessionId: 's1', transport: 'http', passwordChangeRequired: false }

describe('stream tokens (media URLs a player cannot send mtk with)', () => {
  const clock = { now: () => 1_000_000 }

  it('grants one route and one id, to the account that asked, until it expires', () => {
    const tokens = new StreamTokens(clock)
    const token = tokens.grant('/r/play', 'id-1', identity, 1_000_500)
    expect(token).toMatch(/^[\w-]{43}$/)
    // The identity, without the session (the token is not the sign-in session).
    expect(tokens.verify(token, '/r/play', 'id-1')).toEqual({ ...identity, sessionId: null })
    expect(tokens.verify(token, '/r/overlay', 'id-1')).toBeNull()
    expect(tokens.verify(token, '/r/play', 'id-2')).toBeNull()
    expect(tokens.verify(token, '/r/play', undefined)).toBeNull()
    expect(tokens.verify(undefined, '/r/play', 'id-1')).toBeNull()
    expect(tokens.verify(token.slice(1), '/r/play', 'id-1')).toBeNull()
    expect(tokens.verify('x'.repeat(100_000), '/r/play', 'id-1')).toBeNull()
    const late = new StreamTokens({ now: () => 1_000_500 })
    const expiring = late.grant('/r/play', 'id-1', identity, 1_000_500)
    expect(late.verify(expiring, '/r/play', 'id-1')).toBeNull()
  })

  it('extends and revokes', () => {
    let now = 0
    // Time passing moves both clocks.
    const tokens = new StreamTokens({ now: () => now, monotonic: () => now })
    const token = tokens.grant('/r', 'a', identity, 100)
    now = 150
    tokens.extend(token, 200)
    // Expired tokens are forgotten when checked: extend after expiry does not revive one that was checked.
    expect(tokens.verify(token, '/r', 'a')).not.toBeNull()
    tokens.revoke(token)
    expect(tokens.verify(token, '/r', 'a')).toBeNull()
  })

  it('holds a bounded number: expired ones make room, else StreamTokenLimit', () => {
    let now = 0
    const tokens = new StreamTokens({ now: () => now, monotonic: () => now }, 3)
    for (let i = 0; i < 3; i++) tokens.grant('/r', String(i), identity, 10)
    expect(() => tokens.grant('/r', 'x', identity, 10)).toThrow(expect.objectContaining({ id: 'StreamTokenLimit' }))
    now = 11
    expect(tokens.verify(tokens.grant('/r', 'x', identity, 20), '/r', 'x')).not.toBeNull()
  })

  it('lives by its real age whatever the wall clock does: a step neither expires it nor keeps it (docs/system.md "Clocks")', () => {
    let wall = 1_000_000
    let mono = 50
    const tokens = new StreamTokens({ now: () => wall, monotonic: () => mono })
    const forward = tokens.grant('/r', 'a', identity, wall + 6000)
    const back = tokens.grant('/r', 'b', identity, wall + 6000)
    wall += 3 * 3_600_000
    mono += 1000
    expect(tokens.verify(forward, '/r', 'a')).not.toBeNull()
    wall -= 6 * 3_600_000
    mono += 4000
    expect(tokens.verify(back, '/r', 'b')).not.toBeNull()
    // 6 s of real time: both expire, though the wall clock now stands 3 h before their expiresAt.
    mono += 1000
    expect(tokens.verify(forward, '/r', 'a')).toBeNull()
    expect(tokens.verify(back, '/r', 'b')).toBeNull()
    // extend takes the new expiresAt as a distance from the wall clock now.
    const kept = tokens.grant('/r', 'c', identity, wall + 1000)
    mono += 900
    tokens.extend(kept, wall + 3 * 3_600_000 + 1000)
    mono += 3000
    expect(tokens.verify(kept, '/r', 'c')).not.toBeNull()
  })
})
