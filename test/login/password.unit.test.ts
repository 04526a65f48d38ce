import { scryptSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../shared/config.ts'
import { HashSlots } from '../../shared/auth/hash-slots.ts'
import { isApiError } from '../../shared/errors/index.ts'
import {
  WEAKEST_SCRYPT, dummyPasswordHash, hashPasswordDigest, md5Hex, needsRehash, scryptCost, verifyPasswordDigest,
} from '../../shared/auth/password.ts'

const digest = md5Hex('s3cret-Passw0rd')
const CHEAP = scryptCost(WEAKEST_SCRYPT, true)
const DOUBLE = scryptCost('N=32768,r=8,p=1', true)

/** A hash as the device stored it before hashes recorded their parameters (Node's defaults). */
const legacyHash = (md5: string, salt = Buffer.alloc(16, 7)) =>
  `scrypt$${salt.toString('base64')}$${scryptSync(md5.toLowerCase(), salt, 32).toString('base64')}`

describe('password hashes', () => {
  it('ships with OWASP\'s memory-light set for scrypt (16 MiB a hash) and records the parameters in the stored string', async () => {
    expect(loadConfig({}).passwordScrypt).toBe('N=16384,r=8,p=5')
    expect(loadConfig({}).passwordScryptAllowWeak).toBe(false)
    const cost = scryptCost(loadConfig({}).passwordScrypt)
    expect(cost).toEqual({ N: 16384, r: 8, p: 5 })
    expect(128 * cost.N * cost.r).toBe(16 * 1024 * 1024)
    const stored = await hashPasswordDigest(digest, cost)
    expect(stored).toMatch(/^scrypt\$N=16384,r=8,p=5\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/)
    expect(await verifyPasswordDigest(digest, stored)).toBe(true)
    expect(await verifyPasswordDigest(digest.toUpperCase(), stored)).toBe(true)
    expect(await verifyPasswordDigest(md5Hex('other'), stored)).toBe(false)
    expect(needsRehash(stored, cost)).toBe(false)
  })

  it('salts every hash anew', async () => {
    const [a, b] = await Promise.all([hashPasswordDigest(digest, CHEAP), hashPasswordDigest(digest, CHEAP)])
    expect(a).not.toBe(b)
    expect(a.startsWith('scrypt$N=16384,r=8,p=1$')).toBe(true)
  })

  it('verifies a hash of the older form (no parameters: N=16384, r=8, p=1) and asks for it to be re-made', async () => {
    const stored = legacyHash(digest)
    expect(await verifyPasswordDigest(digest, stored)).toBe(true)
    expect(await verifyPasswordDigest(md5Hex('other'), stored)).toBe(false)
    expect(needsRehash(stored, CHEAP)).toBe(true)
    expect(needsRehash(stored, scryptCost('N=16384,r=8,p=5'))).toBe(true)
  })

  it('verifies a hash of another cost by the parameters it records, and asks for it to be re-made', async () => {
    const stored = await hashPasswordDigest(digest, DOUBLE)
    expect(stored.startsWith('scrypt$N=32768,r=8,p=1$')).toBe(true)
    expect(await verifyPasswordDigest(digest, stored)).toBe(true)
    expect(needsRehash(stored, CHEAP)).toBe(true)
    expect(needsRehash(stored, DOUBLE)).toBe(false)
    // OWASP's lightest set in memory (N=2^13, p=10) is below Node's N and still a cost of this device
    const light = await hashPasswordDigest(digest, scryptCost('N=8192,r=8,p=10'))
    expect(await verifyPasswordDigest(digest, light)).toBe(true)
    expect(needsRehash(light, CHEAP)).toBe(true)
  })

  it('refuses a malformed or tampered stored string without throwing', async () => {
    const good = await hashPasswordDigest(digest, CHEAP)
    const [, params, salt, key] = good.split('$')
    const flipped = Buffer.from(key, 'base64')
    flipped[0] ^= 1
    const bad = [
      '', 'plain', 'scrypt', 'scrypt$$', `bcrypt$${params}$${salt}$${key}`, `scrypt$${params}$${salt}`, `${good}$extra`,
      `scrypt$${params}$${salt}$${flipped.toString('base64')}`, // tampered key
      `scrypt$${params}$${salt}$${key.slice(0, 20)}`, // key shorter than 16 bytes
      `scrypt$${params}$${salt.slice(0, 12)}$${key}`, // salt shorter than 16 bytes
      `scrypt$${params}$${salt}$${key.replace(/^./, '!')}`, // not base64
      `scrypt$N=16385,r=8,p=1$${salt}$${key}`, // N not a power of two
      `scrypt$N=8192,r=8,p=1$${salt}$${key}`, // below the floor
      `scrypt$N=1048576,r=8,p=1$${salt}$${key}`, // 1 GiB of memory
      `scrypt$N=16384,r=0,p=1$${salt}$${key}`,
      `scrypt$N=16384,r=8,p=0$${salt}$${key}`,
      `scrypt$N=16384,r=8,p=17$${salt}$${key}`, // more passes than any sign-in may take
      `scrypt$N=131072,r=8,p=9$${salt}$${key}`, // more work (N·p) than any sign-in may take
      `scrypt$N=8192,r=8,p=9$${salt}$${key}`, // below the floor and below OWASP's set of that N
      `scrypt$N=16384,p=1,r=8$${salt}$${key}`,
      `scrypt$N=16384, r=8, p=1$${salt}$${key}`,
    ]
    for (const stored of bad) {
      await expect(verifyPasswordDigest(digest, stored), stored).resolves.toBe(false)
      expect(needsRehash(stored, CHEAP), stored).toBe(false)
    }
  })

  it('takes as cost only OWASP\'s sets or stronger, and below them only when weak costs are allowed (tests)', () => {
    const owasp = ['N=131072,r=8,p=1', 'N=65536,r=8,p=2', 'N=32768,r=8,p=3', 'N=16384,r=8,p=5', 'N=8192,r=8,p=10']
    const stronger = ['N=262144,r=8,p=1', 'N=131072,r=8,p=2', 'N=32768,r=8,p=5', 'N=16384,r=8,p=16']
    for (const text of [...owasp, ...stronger]) {
      const [N, r, p] = text.match(/\d+/g)!.map(Number)
      expect(scryptCost(text), text).toEqual({ N, r, p })
      expect(scryptCost(text, true), text).toEqual({ N, r, p })
    }
    const weak = ['N=16384,r=8,p=1', 'N=16384,r=8,p=4', 'N=65536,r=8,p=1', 'N=32768,r=8,p=2']
    for (const text of weak) {
      expect(() => scryptCost(text), text).toThrow(/PASSWORD_SCRYPT/)
      expect(scryptCost(text, true).r, text).toBe(8)
    }
    const never = [
      '', 'N=16384', 'N=16384,r=8', 'n=16384,r=8,p=5', 'N=16384, r=8, p=5', 'p=5,r=8,N=16384', // form
      'N=24576,r=8,p=5', 'N=8192,r=8,p=1', 'N=4096,r=8,p=10', // N not a power of two, or below every set
      'N=131072,r=4,p=2', 'N=16384,r=16,p=5', // r other than OWASP's 8
      'N=524288,r=8,p=1', 'N=131072,r=8,p=9', 'N=16384,r=8,p=17', // above 256 MiB, N·p above 2^20, p above 16
    ]
    for (const text of never) {
      expect(() => scryptCost(text), text).toThrow(/PASSWORD_SCRYPT/)
      expect(() => scryptCost(text, true), text).toThrow(/PASSWORD_SCRYPT/)
    }
  })

  it('gives unknown accounts a hash of the same cost and length that no digest matches', async () => {
    for (const cost of [CHEAP, DOUBLE]) {
      const real = (await hashPasswordDigest(digest, cost)).split('$')
      const dummy = dummyPasswordHash(cost).split('$')
      expect(dummy[1]).toBe(real[1])
      expect(Buffer.from(dummy[2], 'base64').length).toBe(Buffer.from(real[2], 'base64').length)
      expect(Buffer.from(dummy[3], 'base64').length).toBe(Buffer.from(real[3], 'base64').length)
      expect(await verifyPasswordDigest(digest, dummyPasswordHash(cost))).toBe(false)
    }
  })
})

describe('password hash admission (shared/auth/hash-slots.ts)', () => {
  it('runs at most `slots` hashes, queues `queue` more in order and refuses the rest retryably', async () => {
    const slots = new HashSlots(1, 1)
    const order: string[] = []
    let release!: () => void
    const released = new Promise<void>((resolve) => { release = resolve })
    const a = slots.run(async () => { order.push('a'); await released; return 'a' })
    const b = slots.run(async () => { order.push('b'); return 'b' })
    const refused = await slots.run(async () => 'c').catch((error: unknown) => error)
    expect(isApiError(refused) && refused.item).toMatchObject({ messageKey: 'api.error.LoginBusy', retryable: true, retryAfterSeconds: 1, recommendedAction: 'RETRY_LATER' })
    expect(order).toEqual(['a'])
    release()
    expect(await Promise.all([a, b])).toEqual(['a', 'b'])
    expect(order).toEqual(['a', 'b'])
    await expect(slots.run(async () => { throw new Error('failed hash') })).rejects.toThrow('failed hash')
    expect(await slots.run(async () => 'after a failure')).toBe('after a failure') // the slot came back
  })
})
