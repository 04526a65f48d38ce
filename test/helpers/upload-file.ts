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
