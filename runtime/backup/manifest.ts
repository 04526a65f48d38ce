import { Type, type Static } from '@sinclair/typebox'
import { ApiError } from '../../shared/errors/index.ts'
import { checkSchema, formatIssue } from '../../shared/schema/validate.ts'

/**
 * The backup archive, format version 1 (a gzip tar):
 *
 *   manifest.json        this manifest
 *   manifest.sig         HMAC-SHA256 of manifest.json (hex), keyed from the passphrase (codec.ts)
 *   db/<table>.jsonl     one JSON object per row: SQL column name → encoded value (codec.ts)
 *   files/<folder>/...   the backed-up folders of DATA_DIR (policy.ts)
 *
 * The manifest names every other entry with its size and SHA-256, the software and the schema
 * level (the migrations applied) that wrote it. `formatVersion` changes only when this layout
 * changes; a change of the database is a migration, which a restore runs forward on older data.
 */
export const BACKUP_FORMAT = 'edge-ai-device-backup'
export const FORMAT_VERSION = 1
export const MANIFEST_ENTRY = 'manifest.json'
export const SIGNATURE_ENTRY = 'manifest.sig'
/** A manifest lists every file of the backup: bounded, but room for BACKUP_MAX_ENTRIES of them. */
export const MANIFEST_MAX_BYTES = 64 * 1024 * 1024

const TABLE_NAME = '^[A-Za-z_][A-Za-z0-9_]{0,127}$'
const SHA256 = Type.String({ pattern: '^[0-9a-f]{64}$' })
const BYTES = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })

export const ManifestV1 = Type.Object({
  format: Type.Literal(BACKUP_FORMAT),
  formatVersion: Type.Literal(FORMAT_VERSION),
  product: Type.String({ maxLength: 128 }),
  softwareVersion: Type.String({ maxLength: 64 }),
  createdAt: Type.Integer({ minimum: 0 }),
  createdBy: Type.Union([Type.String({ maxLength: 128 }), Type.Null()]),
  migrations: Type.Array(Type.Object({ tag: Type.String({ minLength: 1, maxLength: 256 }), hash: SHA256 }, { additionalProperties: false }), { maxItems: 10_000 }),
  kdf: Type.Object({ name: Type.Literal('scrypt'), N: Type.Integer(), r: Type.Integer(), p: Type.Integer(), salt: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
  tables: Type.Array(Type.Object({
    name: Type.String({ pattern: TABLE_NAME }),
    entry: Type.String({ maxLength: 200 }),
    rows: BYTES,
    bytes: BYTES,
    sha256: SHA256,
  }, { additionalProperties: false }), { maxItems: 1000 }),
  files: Type.Array(Type.Object({ path: Type.String({ minLength: 1, maxLength: 4096 }), bytes: BYTES, sha256: SHA256 }, { additionalProperties: false })),
}, { additionalProperties: false })

export type Manifest = Static<typeof ManifestV1>

export const tableEntry = (table: string) => `db/${table}.jsonl`

const invalid = (reason: string) => new ApiError('BackupManifestInvalid', { details: { reason } })

/**
 * Parses a manifest: its format and version first (a newer format is refused as such, whatever
 * else it holds), then the whole of it against version 1.
 */
export function parseManifest(bytes: Buffer): Manifest {
  let value: unknown
  try {
    value = JSON.parse(bytes.toString('utf8'))
  } catch (error) {
    throw invalid(`manifest.json is not JSON: ${(error as Error).message}`)
  }
  const head = value as { format?: unknown; formatVersion?: unknown } | null
  if (typeof head !== 'object' || head === null || head.format !== BACKUP_FORMAT) throw invalid(`manifest.json is not a backup of this device ("format" must be "${BACKUP_FORMAT}")`)
  if (head.formatVersion !== FORMAT_VERSION) {
    throw new ApiError('BackupFormatUnsupported', { details: { formatVersion: String(head.formatVersion).slice(0, 32), supported: [FORMAT_VERSION] } })
  }
  const issues = checkSchema(ManifestV1, value)
  if (issues.length > 0) throw invalid(`manifest.json: ${formatIssue(issues[0]!)}`)
  return value as Manifest
}
