import { createCipheriv, createDecipheriv, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

/**
 * The cryptography and value encoding of a backup (docs/system.md "Backup, restore and factory reset").
 *
 * - One passphrase, chosen by the operator at backup time and never stored, gives two keys
 *   (scrypt): one encrypts the secret columns (AES-256-GCM, the column's place as associated
 *   data, so a value cannot be moved to another column), one signs the manifest (HMAC-SHA256),
 *   which holds the checksum of every other entry: the whole archive is authenticated.
 * - A database value travels as JSON: text, numbers and null as themselves; what JSON cannot
 *   hold as a tagged object: `{"$blob": base64}`, `{"$real": "Infinity"}`, `{"$int": "<digits>"}`
 *   (an integer beyond 2^53), `{"$secret": base64(iv | ciphertext | tag)}`.
 */

export interface KdfParams {
  N: number
  r: number
  p: number
  /** base64, 16 random bytes. */
  salt: string
}

/** 32 MiB and about 0.1 s per derivation on the device: one per backup and per restore attempt. */
export const KDF_DEFAULTS = { N: 2 ** 15, r: 8, p: 1 }
/** A manifest may name a dearer cost, within bounds: a hostile one must not hold the device's memory or CPU. */
const MAX_KDF_N = 2 ** 17
const MAX_KDF_P = 4

export interface BackupKeys {
  secrets: Buffer
  manifest: Buffer
}

export const newKdfParams = (): KdfParams => ({ ...KDF_DEFAULTS, salt: randomBytes(16).toString('base64') })

/** Why a manifest's KDF parameters are refused, or null. */
export function kdfProblem(params: KdfParams): string | null {
  const { N, r, p } = params
  if (!Number.isInteger(N) || N < 2 ** 14 || N > MAX_KDF_N || (N & (N - 1)) !== 0) return `kdf N must be a power of two from 2^14 to 2^17`
  if (r !== 8) return 'kdf r must be 8'
  if (!Number.isInteger(p) || p < 1 || p > MAX_KDF_P) return `kdf p must be 1 to ${MAX_KDF_P}`
  if (Buffer.from(params.salt, 'base64').length !== 16) return 'kdf salt must be 16 bytes'
  return null
}

export async function deriveKeys(passphrase: string, params: KdfParams): Promise<BackupKeys> {
  const bytes = await new Promise<Buffer>((resolve, reject) => scrypt(passphrase.normalize('NFC'), Buffer.from(params.salt, 'base64'), 64,
    { N: params.N, r: params.r, p: params.p, maxmem: 256 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key))))
  return { secrets: bytes.subarray(0, 32), manifest: bytes.subarray(32) }
}

export const signManifest = (bytes: Buffer, keys: BackupKeys): string => createHmac('sha256', keys.manifest).update(bytes).digest('hex')

export function manifestSignatureValid(bytes: Buffer, signature: string, keys: BackupKeys): boolean {
  const expected = Buffer.from(signManifest(bytes, keys), 'hex')
  const given = Buffer.from(signature.trim(), 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** A value as SQLite hands it over (libsql: text, number, bigint, ArrayBuffer for blobs, null). */
export type SqlValue = string | number | bigint | ArrayBuffer | Uint8Array | null

type Encoded = string | number | null | { $blob: string } | { $real: string } | { $int: string } | { $secret: string }

function encodePlain(value: SqlValue): Encoded {
  if (value === null || typeof value === 'string') return value
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : { $int: value.toString() }
  if (typeof value === 'number') return Number.isFinite(value) ? value : { $real: String(value) }
  return { $blob: Buffer.from(value instanceof ArrayBuffer ? new Uint8Array(value) : value).toString('base64') }
}

const TAGS = ['$blob', '$real', '$int', '$secret'] as const

/** A plain (not secret) encoded value back to SQL; throws a reason when it is not one this format writes. */
function decodePlain(encoded: unknown): Exclude<SqlValue, ArrayBuffer> {
  if (encoded === null || typeof encoded === 'string') return encoded
  if (typeof encoded === 'number') return encoded
  if (typeof encoded !== 'object' || Array.isArray(encoded)) throw new Error(`a value of type ${typeof encoded} is not a database value`)
  const keys = Object.keys(encoded)
  const tag = keys[0] as (typeof TAGS)[number]
  const text = (encoded as Record<string, unknown>)[tag]
  if (keys.length !== 1 || !TAGS.includes(tag) || typeof text !== 'string') throw new Error('an object value must be one of {$blob}, {$real}, {$int}, {$secret}')
  if (tag === '$blob') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new Error('$blob is not base64')
    return new Uint8Array(Buffer.from(text, 'base64'))
  }
  if (tag === '$real') {
    if (text !== 'Infinity' && text !== '-Infinity') throw new Error('$real must be "Infinity" or "-Infinity"')
    return Number(text)
  }
  if (tag === '$int') {
    if (!/^-?\d{1,19}$/.test(text)) throw new Error('$int must be an integer')
    return BigInt(text)
  }
  throw new Error('a secret inside a secret')
}

const placeOf = (table: string, column: string) => Buffer.from(`${table}.${column}`)

export function encodeValue(value: SqlValue, secret: { keys: BackupKeys; table: string; column: string } | null): Encoded {
  const plain = encodePlain(value)
  if (!secret || plain === null) return plain
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', secret.keys.secrets, iv).setAAD(placeOf(secret.table, secret.column))
  const body = Buffer.concat([cipher.update(JSON.stringify(plain), 'utf8'), cipher.final()])
  return { $secret: Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64') }
}

/** The SQL value of an encoded one; a secret only in a secret column, and it must open with the keys. */
export function decodeValue(encoded: unknown, secret: { keys: BackupKeys; table: string; column: string } | null): Exclude<SqlValue, ArrayBuffer> {
  const sealed = typeof encoded === 'object' && encoded !== null && Object.hasOwn(encoded, '$secret') ? (encoded as { $secret: unknown }).$secret : undefined
  if (sealed === undefined) {
    if (secret && encoded !== null) throw new Error('a secret column holds a value that is not encrypted')
    return decodePlain(encoded)
  }
  if (!secret) throw new Error('an encrypted value in a column that holds no secret')
  if (typeof sealed !== 'string' || Object.keys(encoded as object).length !== 1) throw new Error('$secret must be base64')
  const bytes = Buffer.from(sealed, 'base64')
  if (bytes.length < 12 + 16) throw new Error('$secret is too short')
  try {
    const decipher = createDecipheriv('aes-256-gcm', secret.keys.secrets, bytes.subarray(0, 12)).setAAD(placeOf(secret.table, secret.column))
    decipher.setAuthTag(bytes.subarray(bytes.length - 16))
    const text = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8')
    return decodePlain(JSON.parse(text))
  } catch {
    throw new Error('the encrypted value does not open (another backup\'s value, or altered)')
  }
}
