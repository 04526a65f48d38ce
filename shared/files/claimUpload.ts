import type { Ctx } from '../handler.ts'
import { ApiError } from '../errors/index.ts'

/** The part of the upload service (`ctx.uploads`, shared/uploads/types.ts) models and upgrades use. */
export interface ClaimedFile {
  uploadId: string
  path: string
  originalFilename: string
  size: number
  release(): Promise<void>
}
interface UploadClaimer {
  claim(uploadId: string, identity: NonNullable<Ctx['identity']>, purpose: string): Promise<ClaimedFile>
}

/**
 * Consumes a completed upload of the given purpose (spec 3.1 complete → consumed, 5.4 same
 * identity). Answers NotSupported while the device has no upload service mounted.
 */
export async function claimUpload(ctx: Ctx, uploadId: string, purpose: string): Promise<ClaimedFile> {
  const uploads = (ctx as Ctx & { uploads?: UploadClaimer }).uploads
  if (!uploads) throw new ApiError('NotSupported', { details: { feature: 'uploads' }, msgText: 'The upload service is not available on this device.' })
  if (!ctx.identity) throw new ApiError('Unauthorized')
  return uploads.claim(uploadId, ctx.identity, purpose)
}
