import { createHash, randomUUID } from 'node:crypto'
import type { DeviceProcess } from './device.ts'

const CHUNK = 4 * 1024 * 1024

/**
 * Uploads a whole file through `uploadTemp` (spec 4.5, chunks of 4 MB) the way a browser
 * does, and returns the completed session's `uploadId`.
 */
export async function uploadFile(device: Pick<DeviceProcess, 'url'>, mtk: string, data: Buffer, filename: string, purpose: string): Promise<string> {
  const totalChunks = Math.max(1, Math.ceil(data.length / CHUNK))
  const clientRequestId = randomUUID()
  const sha256 = createHash('sha256').update(data).digest('hex')
  let uploadId: string | undefined
  for (let index = 0; index < totalChunks; index++) {
    const chunk = data.subarray(index * CHUNK, (index + 1) * CHUNK)
    const form = new FormData()
    const fields = { purpose, chunkIndex: index, totalChunks, totalSize: data.length, chunkSize: chunk.length, sha256, clientRequestId, uploadId }
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, String(value))
    form.append('file', new Blob([new Uint8Array(chunk)]), filename)
    const response = await fetch(`${device.url}/gtw/cwai/atomic/model/uploadTemp`, { method: 'POST', headers: { mtk }, body: form })
    const body = await response.json() as { resCode: number; resData: { uploadId: string; complete: boolean } }
    if (body.resCode !== 1) throw new Error(`uploadTemp failed: ${JSON.stringify(body)}`)
    uploadId = body.resData.uploadId
    if (index === totalChunks - 1 && !body.resData.complete) throw new Error('upload not complete after the last chunk')
  }
  return uploadId!
}

/**
 * A file (purpose `image`) sent in three `uploadTemp` chunks (spec 4.5), one chunk at a time
 * by the caller: `send(index)` answers the envelope; `uploadId` is the first answer's.
 */
export function chunkedUpload(device: Pick<DeviceProcess, 'url'>, mtk: string, data: Buffer) {
  const totalChunks = 3
  const size = Math.ceil(data.length / totalChunks)
  const clientRequestId = randomUUID()
  const sha256 = createHash('sha256').update(data).digest('hex')
  let uploadId: string | undefined
  return {
    get uploadId() { return uploadId },
    async send(index: number) {
      const chunk = data.subarray(index * size, (index + 1) * size)
      const form = new FormData()
      const fields = { purpose: 'image', chunkIndex: index, totalChunks, totalSize: data.length, chunkSize: chunk.length, sha256, clientRequestId, uploadId }
      for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, String(value))
      form.append('file', new Blob([new Uint8Array(chunk)]), 'face.jpg')
      const body = await (await fetch(`${device.url}/gtw/cwai/atomic/model/uploadTemp`, { method: 'POST', headers: { mtk }, body: form })).json() as any
      uploadId ??= body.resData?.uploadId
      return body
    },
  }
}
