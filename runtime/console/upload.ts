import type { DeviceClient } from '../client/client.ts'
import { uploadFile, type UploadProgress } from '../client/upload.ts'
import { browserResumeStore, fileSource, resumeKeyOf } from './session.ts'

/** How often an interrupted upload is resumed before it fails. */
export const UPLOAD_RETRIES = 8

/**
 * A browser file sent through the resumable chunked upload (spec 4.5, 4.12) with the purpose
 * its consumer claims it under; resolves with the `uploadId` of the completed session.
 */
export async function uploadBrowserFile(client: DeviceClient, account: string, file: File, purpose: string,
  options: { onProgress?: (p: UploadProgress) => void; onRetry?: (attempt: number) => void; signal?: AbortSignal } = {}): Promise<string> {
  const upload = await uploadFile(client, fileSource(file), {
    purpose, resumeKey: `${purpose}|${resumeKeyOf(account, file)}`, store: browserResumeStore,
    retries: UPLOAD_RETRIES, retryDelayMs: (attempt) => Math.min(5000, 250 * 2 ** (attempt - 1)),
    ...options,
  })
  return upload.uploadId
}

/** spec 4.5: the console accepts JPEG, PNG and BMP; the device decoder has the last word. */
export const IMAGE_ACCEPT = 'image/jpeg,image/png,image/bmp,.jpg,.jpeg,.png,.bmp'
export const isAcceptedImage = (file: File) => /^image\/(jpeg|png|bmp|x-ms-bmp)$/.test(file.type) || /\.(jpe?g|png|bmp)$/i.test(file.name)
