import { randomBytes, scrypt as scryptCb, timingSafeEqual, createHash } from 'node:crypto'
import { promisify } from 'node:util'

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>
const KEY_LENGTH = 32

/** spec 4.1: clients send the 32-character hex MD5 digest of the password, never plaintext. */
export const MD5_HEX = /^[0-9a-fA-F]{32}$/

export const md5Hex = (text: string) => createHash('md5').update(text, 'utf8').digest('hex')

/**
 * The stored form: `scrypt$<salt b64>$<key b64>` over the lower-cased MD5 digest. The digest
 * is a password equivalent on the wire (spec 4.1), so it is stretched and salted at rest.
 */
export async function hashPasswordDigest(md5: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scrypt(md5.toLowerCase(), salt, KEY_LENGTH)
  return `scrypt$${salt.toString('base64')}$${key.toString('base64')}`
}

export async function verifyPasswordDigest(md5: string, stored: string): Promise<boolean> {
  const [scheme, saltText, keyText] = stored.split('$')
  if (scheme !== 'scrypt' || !saltText || !keyText) return false
  const expected = Buffer.from(keyText, 'base64')
  const actual = await scrypt(md5.toLowerCase(), Buffer.from(saltText, 'base64'), expected.length)
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** Used when the account does not exist, so that both failures cost the same time. */
export const DUMMY_PASSWORD_HASH = `scrypt$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_LENGTH).toString('base64')}`
