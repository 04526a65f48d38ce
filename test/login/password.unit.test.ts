import { scryptSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../shared/config.ts'
import {
  MIN_SCRYPT_N, OWASP_SCRYPT_N, dummyPasswordHash, hashPasswordDigest, md5Hex, needsRehash, scryptCost, verifyPasswordDigest,
} from '../../shared/auth/password.ts'

const digest = md5Hex('s3cret-Passw0rd')
const CHEAP = scryptCost(MIN_SCRYPT_N)

/** A hash as the device stored it before hashes recorded their parameters (Node's defaults). */
const legacyHash = (md5: string, salt = Buffer.alloc(16, 7)) =>
  `scrypt$${salt.toString('base64')}$${scryptSync(md5.toLowerCase(), salt, 32).toString('base64')}`

describe('password hashes', () => {
  it('ships with OWASP\'s minimum for scrypt and records the parameters in the stored string', async () => {
    expect(OWASP_SCRYPT_N).toBe(131072)
    expect(loadConfig({}).passwordScryptN).toBe(OWASP_SCRYPT_N)
    const cost = scryptCost(loadConfig({}).passwordScryptN)
    expect(cost).toEqual({ N: 131072, r: 8, p: 1 })
    const stored = await hashPasswordDigest(digest, cost)
    expect(stored).toMatch(/^scrypt\$N=131072,r=8,p=1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/)
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
    expect(needsRehash(stored, scryptCost(OWASP_SCRYPT_N))).toBe(true)
  })

  it('verifies a hash of another cost by the parameters it records, and asks for it to be re-made', async () => {
    const stored = await hashPasswordDigest(digest, scryptCost(2 * MIN_SCRYPT_N))
    expect(stored.startsWith('scrypt$N=32768,r=8,p=1$')).toBe(true)
    expect(await verifyPasswordDigest(digest, stored)).toBe(true)
    expect(needsRehash(stored, CHEAP)).toBe(true)
    expect(needsRehash(stored, scryptCost(2 * MIN_SCRYPT_N))).toBe(false)
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
      `scrypt$N=16384,r=8,p=9$${salt}$${key}`,
      `scrypt$N=16384,p=1,r=8$${salt}$${key}`,
      `scrypt$N=16384, r=8, p=1$${salt}$${key}`,
    ]
    for (const stored of bad) {
      await expect(verifyPasswordDigest(digest, stored), stored).resolves.toBe(false)
      expect(needsRehash(stored, CHEAP), stored).toBe(false)
    }
  })

  it('takes as cost only a power of two from 16384 to 262144', () => {
    for (const N of [2 ** 14, 2 ** 17, 2 ** 18]) expect(scryptCost(N)).toEqual({ N, r: 8, p: 1 })
    for (const N of [0, 1000, 2 ** 13, 3 * 2 ** 14, 2 ** 19, 16384.5]) expect(() => scryptCost(N), String(N)).toThrow(/PASSWORD_SCRYPT_N/)
  })

  it('gives unknown accounts a hash of the same cost and length that no digest matches', async () => {
    for (const cost of [CHEAP, scryptCost(2 * MIN_SCRYPT_N)]) {
      const real = (await hashPasswordDigest(digest, cost)).split('$')
      const dummy = dummyPasswordHash(cost).split('$')
      expect(dummy[1]).toBe(real[1])
      expect(Buffer.from(dummy[2], 'base64').length).toBe(Buffer.from(real[2], 'base64').length)
      expect(Buffer.from(dummy[3], 'base64').length).toBe(Buffer.from(real[3], 'base64').length)
      expect(await verifyPasswordDigest(digest, dummyPasswordHash(cost))).toBe(false)
    }
  })
})
