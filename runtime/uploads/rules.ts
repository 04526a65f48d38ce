import { ApiError } from '../../shared/errors/index.ts'
import type { Config } from '../../shared/config.ts'
import type { ChunkFields } from '../../shared/uploads/index.ts'
import type { UploadSessionRow } from './repository.ts'

/**
 * Pure checks of one `uploadTemp` chunk against the policy (spec 2.5, 8) and against its
 * session (spec 4.5: every chunk repeats the same file parameters). Each returns nothing or
 * throws the catalogue error a client can act on; none touches state.
 */

/** Estimated bytes of one chunk record in the manifest (index, offset, size, row overhead). */
export const CHUNK_RECORD_BYTES = 64
/** Estimated bytes of the fixed part of a manifest row. */
export const MANIFEST_BASE_BYTES = 512
const MAX_FILENAME_BYTES = 1024
const MAX_ID_LENGTH = 200
const SHA256_HEX = /^[0-9a-f]{64}$/

const mismatch = (field: string, expected: unknown, actual: unknown, reason: string) =>
  new ApiError('UPLOAD_PARAMETERS_MISMATCH', {
    details: { field, expected, actual },
    msgText: `${field}: ${reason}`,
  })

/** Manifest size charged against the per-session metadata budget (spec 8, UPLOAD_METADATA_BUDGET). */
export const metadataBytesOf = (chunk: ChunkFields): number =>
  MANIFEST_BASE_BYTES + Buffer.byteLength(chunk.filename) + Buffer.byteLength(chunk.purpose) +
  Buffer.byteLength(chunk.clientRequestId ?? '') + chunk.totalChunks * CHUNK_RECORD_BYTES

/** Checks a chunk's fields on their own and against the deployment policy. */
export function checkChunkFields(chunk: ChunkFields, config: Config): void {
  const invalid = (field: string, reason: string) => new ApiError('InvalidParam', {
    details: { field, reason }, msgText: `Invalid part ${field}: ${reason}`, recommendedAction: 'CHECK_UPLOAD_PARAMETERS',
  })
  for (const field of ['chunkIndex', 'totalChunks', 'totalSize', 'chunkSize'] as const) {
    const value = chunk[field]
    if (!Number.isSafeInteger(value) || value < 0) throw invalid(field, 'must be a non-negative integer')
  }
  if (chunk.purpose.length === 0 || chunk.purpose.length > 64) throw invalid('purpose', 'must be 1 to 64 characters')
  if (Buffer.byteLength(chunk.filename) > MAX_FILENAME_BYTES) throw invalid('file', `filename longer than ${MAX_FILENAME_BYTES} bytes`)
  if (chunk.clientRequestId !== undefined && (chunk.clientRequestId.length === 0 || chunk.clientRequestId.length > MAX_ID_LENGTH))
    throw invalid('clientRequestId', `must be 1 to ${MAX_ID_LENGTH} characters`)
  if (chunk.uploadId !== undefined && (chunk.uploadId.length === 0 || chunk.uploadId.length > MAX_ID_LENGTH))
    throw invalid('uploadId', `must be 1 to ${MAX_ID_LENGTH} characters`)
  if (chunk.sha256 !== undefined && !SHA256_HEX.test(chunk.sha256)) throw invalid('sha256', 'must be 64 hexadecimal characters')
  if (chunk.totalChunks < 1) throw invalid('totalChunks', 'must be at least 1')
  if (chunk.chunkIndex >= chunk.totalChunks) throw invalid('chunkIndex', 'must be less than totalChunks')
  if (chunk.chunkIndex > 0 && chunk.uploadId === undefined) throw invalid('uploadId', 'is required for chunks after chunk 0')

  const maxChunk = config.uploadMaxChunkBytes
  if (chunk.chunkSize > maxChunk)
    throw new ApiError('UPLOAD_CHUNK_TOO_LARGE', { details: { actualBytes: chunk.chunkSize, limitBytes: maxChunk, resource: 'upload-chunk', purpose: chunk.purpose } })
  if (config.uploadMaxTotalBytes > 0 && chunk.totalSize > config.uploadMaxTotalBytes)
    throw new ApiError('UPLOAD_TOO_LARGE', { details: { actualBytes: chunk.totalSize, limitBytes: config.uploadMaxTotalBytes, purpose: chunk.purpose } })
  if (config.uploadMaxChunks > 0 && chunk.totalChunks > config.uploadMaxChunks)
    throw new ApiError('UPLOAD_TOO_MANY_CHUNKS', { details: { totalChunks: chunk.totalChunks, limit: config.uploadMaxChunks, maxChunkSize: maxChunk } })
  // Every chunk carries at least one byte (an empty file is one empty chunk) ...
  if (chunk.totalChunks > Math.max(1, chunk.totalSize))
    throw mismatch('totalChunks', `at most ${Math.max(1, chunk.totalSize)}`, chunk.totalChunks, 'more chunks than bytes')
  // ... and at most maxChunkSize bytes.
  if (chunk.totalSize > chunk.totalChunks * maxChunk)
    throw mismatch('totalChunks', `at least ${Math.ceil(chunk.totalSize / maxChunk)}`, chunk.totalChunks, `totalSize needs more chunks of at most ${maxChunk} bytes`)
  const metadataBytes = metadataBytesOf(chunk)
  if (metadataBytes > config.uploadMetadataBudgetBytes)
    throw new ApiError('UPLOAD_METADATA_BUDGET', { details: { actualBytes: metadataBytes, limitBytes: config.uploadMetadataBudgetBytes, totalChunks: chunk.totalChunks } })
}

/** spec 4.5: every chunk of one upload repeats filename, purpose, totalChunks, totalSize, clientRequestId, sha256. */
export function checkSameFile(chunk: ChunkFields, session: UploadSessionRow): void {
  const expected = {
    filename: JSON.parse(session.filenameJson) as string,
    purpose: session.purpose,
    totalChunks: session.totalChunks,
    totalSize: session.totalSize,
    sha256: session.sha256 ?? undefined,
  }
  for (const [field, value] of Object.entries(expected))
    if (chunk[field as keyof typeof expected] !== value)
      throw mismatch(field, value, chunk[field as keyof typeof expected], 'differs from the first chunk of this upload')
  // A chunk without clientRequestId is accepted when it names the session by uploadId.
  if (chunk.clientRequestId !== undefined && chunk.clientRequestId !== (session.clientRequestId ?? undefined))
    throw mismatch('clientRequestId', session.clientRequestId, chunk.clientRequestId, 'differs from the first chunk of this upload')
}

/**
 * The next chunk (index == nextChunkIndex) must fit: the last one completes totalSize
 * exactly; an earlier one leaves at least one byte and at most maxChunkSize per remaining chunk.
 */
export function checkChunkPlacement(chunk: ChunkFields, session: UploadSessionRow, maxChunk: number): void {
  const remaining = session.totalSize - session.receivedBytes
  const chunksAfter = session.totalChunks - chunk.chunkIndex - 1
  if (chunksAfter === 0) {
    if (chunk.chunkSize !== remaining) throw mismatch('chunkSize', remaining, chunk.chunkSize, 'the last chunk must complete totalSize exactly')
    return
  }
  if (chunk.chunkSize < 1 || remaining - chunk.chunkSize < chunksAfter)
    throw mismatch('chunkSize', `1 to ${remaining - chunksAfter}`, chunk.chunkSize, 'leaves too few bytes for the remaining chunks')
  if (remaining - chunk.chunkSize > chunksAfter * maxChunk)
    throw new ApiError('UPLOAD_CHUNKS_TOO_SMALL', {
      details: { chunkSize: chunk.chunkSize, remainingBytes: remaining, chunksAfter, maxChunkSize: maxChunk },
    })
}

/** A resent chunk (index < nextChunkIndex) must declare the size it had when accepted. */
export function checkResentChunk(chunk: ChunkFields, acceptedSize: number): void {
  if (chunk.chunkSize !== acceptedSize)
    throw mismatch('chunkSize', acceptedSize, chunk.chunkSize, `chunk ${chunk.chunkIndex} was accepted with another size`)
}

/** Error for a session that can no longer take chunks or be claimed (spec 3.1 terminal states). */
export function endedSessionError(session: UploadSessionRow): ApiError | null {
  const details = { uploadId: session.id, state: session.state }
  switch (session.state) {
    case 'consumed': return new ApiError('UPLOAD_CONSUMED', { details })
    case 'cancelled': return new ApiError('UPLOAD_CANCELLED', { details })
    case 'expired': return new ApiError('UPLOAD_EXPIRED', { details })
    case 'failed': return new ApiError('UPLOAD_FAILED', { details: { ...details, reason: session.endReason } })
    default: return null
  }
}
