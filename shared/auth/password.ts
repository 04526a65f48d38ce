import { randomBytes, scrypt as scryptCb, timingSafeEqual, createHash, type ScryptOptions } from 'node:crypto'
import { promisify } from 'node:util'
import { passwordHashSlots } from './hash-slots.ts'

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number, options: ScryptOptions) => Promise<Buffer>
const KEY_LENGTH = 32
const SALT_LENGTH = 16

/** spec 4.1: clients send the 32-character hex MD5 digest of the password, never plaintext. */
export const MD5_HEX = /^[0-9a-fA-F]{32}$/

export const md5Hex = (text: string) => createHash('md5').update(text, 'utf8').digest('hex')

/** scrypt's parameters: N (CPU and memory cost), r (block size), p (parallelism). */
export interface ScryptCost {
  N: number
  r: number
  p: number
}

/**
 * OWASP Password Storage Cheat Sheet's scrypt settings, all r=8 and of equal strength: N=2^17
 * with p=1, 2^16 with p=2, 2^15 with p=3, 2^14 with p=5, 2^13 with p=10. A smaller N takes less
 * memory (about 128·N·r bytes: 128 MiB at 2^17, 16 MiB at 2^14) for the same work.
 */
const OWASP_SETS: readonly { N: number; p: number }[] = [
  { N: 2 ** 17, p: 1 }, { N: 2 ** 16, p: 2 }, { N: 2 ** 15, p: 3 }, { N: 2 ** 14, p: 5 }, { N: 2 ** 13, p: 10 },
]
/** The cheapest cost of all: Node's defaults, that of every hash stored before hashes recorded their parameters. */
export const WEAKEST_SCRYPT = 'N=16384,r=8,p=1'
/** Most memory one hash may take (about 128·N·r bytes): a tampered row cannot make a sign-in take more. */
const MAX_SCRYPT_MEMORY = 256 * 1024 * 1024
/** Most work (N·p) one hash may take: 8 times OWASP's. */
const MAX_SCRYPT_WORK = 2 ** 20
const MAX_SCRYPT_P = 16

/** Hashes stored as `scrypt$<salt>$<key>` were made with Node's defaults. */
const LEGACY_COST: ScryptCost = { N: 2 ** 14, r: 8, p: 1 }

const isPowerOfTwo = (n: number) => Number.isSafeInteger(n) && n > 1 && (n & (n - 1)) === 0

/** One of OWASP's sets, or more memory or more passes than one of them. */
const meetsOwasp = ({ N, r, p }: ScryptCost) => r === 8 && OWASP_SETS.some((set) => N >= set.N && p >= set.p)
/** Not below Node's defaults (the cheapest cost any hash of this device was made with). */
const meetsFloor = ({ N, r, p }: ScryptCost) => r === 8 && N >= LEGACY_COST.N && p >= 1
/** Within what one sign-in may cost, whatever a stored string says. */
const bounded = ({ N, r, p }: ScryptCost) =>
  isPowerOfTwo(N) && r >= 1 && p >= 1 && p <= MAX_SCRYPT_P && 128 * N * r <= MAX_SCRYPT_MEMORY && N * p <= MAX_SCRYPT_WORK
const allowed = (cost: ScryptCost, allowWeak: boolean) => bounded(cost) && (meetsOwasp(cost) || (allowWeak && meetsFloor(cost)))

const COST_FORM = /^N=(\d{1,7}),r=(\d{1,2}),p=(\d{1,2})$/

/**
 * The cost of new hashes from PASSWORD_SCRYPT (`N=<N>,r=<r>,p=<p>`): one of OWASP's sets or
 * stronger; with `allowWeak` (PASSWORD_SCRYPT_ALLOW_WEAK, tests) down to WEAKEST_SCRYPT. Anything
 * else is a start-up error.
 */
export function scryptCost(text: string, allowWeak = false): ScryptCost {
  const match = COST_FORM.exec(text)
  const cost = match ? { N: Number(match[1]), r: Number(match[2]), p: Number(match[3]) } : null
  if (!cost || !allowed(cost, allowWeak))
    throw new RangeError(`PASSWORD_SCRYPT: expected N=<power of two>,r=8,p=<p> at least one of OWASP's sets (${OWASP_SETS.map((s) => `N=${s.N},p=${s.p}`).join('; ')})${allowWeak ? ` or ${WEAKEST_SCRYPT}` : ''}, at most ${MAX_SCRYPT_MEMORY / 2 ** 20} MiB and N·p ${MAX_SCRYPT_WORK}; got ${JSON.stringify(text)}`)
  return cost
}

// Node refuses scrypt above `maxmem` (default 32 MiB); it needs about 128·N·r bytes.
// Every hash, whoever asks for it, passes the process-wide admission (hash-slots.ts).
const derive = (md5: string, salt: Buffer, keyLength: number, { N, r, p }: ScryptCost) =>
  passwordHashSlots().run(() => scrypt(md5.toLowerCase(), salt, keyLength, { N, r, p, maxmem: 2 * 128 * N * r }))

const format = ({ N, r, p }: ScryptCost, salt: Buffer, key: Buffer) =>
  `scrypt$N=${N},r=${r},p=${p}$${salt.toString('base64')}$${key.toString('base64')}`

/**
 * The stored form: `scrypt$N=<N>,r=<r>,p=<p>$<salt b64>$<key b64>` over the lower-cased MD5
 * digest. The digest is a password equivalent on the wire (spec 4.1), so it is stretched and
 * salted at rest; the parameters travel with the hash, so a change of cost leaves older hashes
 * verifiable (and upgraded at their next sign-in, runtime/auth/accounts.ts).
 */
export async function hashPasswordDigest(md5: string, cost: ScryptCost): Promise<string> {
  const salt = randomBytes(SALT_LENGTH)
  return format(cost, salt, await derive(md5, salt, KEY_LENGTH, cost))
}

const B64 = '([A-Za-z0-9+/]{22,88}={0,2})'
const CURRENT_FORM = new RegExp(`^scrypt\\$N=(\\d{1,7}),r=(\\d{1,2}),p=(\\d{1,2})\\$${B64}\\$${B64}$`)
const LEGACY_FORM = new RegExp(`^scrypt\\$${B64}\\$${B64}$`)

interface StoredHash {
  cost: ScryptCost
  legacy: boolean
  salt: Buffer
  key: Buffer
}

/** A stored hash, or null when it is malformed or names parameters this device would not run. */
function parse(stored: string): StoredHash | null {
  const current = CURRENT_FORM.exec(stored)
  const legacy = current ? null : LEGACY_FORM.exec(stored)
  if (!current && !legacy) return null
  const cost = current ? { N: Number(current[1]), r: Number(current[2]), p: Number(current[3]) } : LEGACY_COST
  const [saltText, keyText] = current ? [current[4], current[5]] : [legacy![1], legacy![2]]
  const salt = Buffer.from(saltText, 'base64')
  const key = Buffer.from(keyText, 'base64')
  // Only a cost this device could have been set to (tests included).
  if (!allowed(cost, true) || salt.length < SALT_LENGTH || key.length < 16 || key.length > 64) return null
  return { cost, legacy: !current, salt, key }
}

/** Whether the digest matches the stored hash; a malformed stored string is a mismatch, never an error. */
export async function verifyPasswordDigest(md5: string, stored: string): Promise<boolean> {
  const hash = parse(stored)
  if (!hash) return false
  const actual = await derive(md5, hash.salt, hash.key.length, hash.cost)
  return timingSafeEqual(actual, hash.key)
}

/** Whether a stored hash should be made again with `cost` (older form, or other parameters). */
export function needsRehash(stored: string, cost: ScryptCost): boolean {
  const hash = parse(stored)
  return hash !== null && (hash.legacy || hash.cost.N !== cost.N || hash.cost.r !== cost.r || hash.cost.p !== cost.p)
}

/**
 * Verified when the account does not exist, so that both failures cost the same time: a hash of
 * the current cost that no digest matches (an all-zero key).
 */
export const dummyPasswordHash = (cost: ScryptCost) => format(cost, Buffer.alloc(SALT_LENGTH), Buffer.alloc(KEY_LENGTH))
