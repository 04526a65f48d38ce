import { randomUUID } from 'node:crypto'
import type { BenchClient } from './http-client.ts'

export interface DetectFlowTarget {
  image: Buffer
  taskId: string
  algorithmCode: string
  /** The form of `fullPicture` the device answers (FILE_SERVICE_BASE_URL set: `url`); default `data`. */
  fullPicture?: 'data' | 'url'
}

/**
 * The HTTP flow of bench/detect.bench.ts: `uploadTemp` of the image in one chunk, then
 * `PTaskDetectPic` with its uploadId; checks the answer and returns the number of targets.
 * `onStage` gets each step's milliseconds.
 */
export async function detectFlow(client: BenchClient, target: DetectFlowTarget, onStage?: (stage: 'upload' | 'detect', ms: number) => void): Promise<number> {
  let started = performance.now()
  const fields = { purpose: 'image', chunkIndex: 0, totalChunks: 1, totalSize: target.image.length, chunkSize: target.image.length, clientRequestId: randomUUID() }
  const uploaded = await client.postMultipart('/gtw/cwai/atomic/model/uploadTemp', fields, { name: 'image.jpg', bytes: target.image })
  if (uploaded.body.resCode !== 1) throw new Error(JSON.stringify(uploaded.body))
  onStage?.('upload', performance.now() - started)
  started = performance.now()
  const detected = await client.postJson('/gtw/cwai/aihost/PTaskDetectPic', { taskId: target.taskId, algorithmCode: target.algorithmCode, uploadId: uploaded.body.resData.uploadId })
  onStage?.('detect', performance.now() - started)
  if (detected.body.resCode !== 1) throw new Error(JSON.stringify(detected.body))
  const expected = target.fullPicture === 'url' ? /^https?:\/\/.+\?id=/ : /^data:image\/jpeg;base64,/
  if (!expected.test(String(detected.body.resData.fullPicture))) throw new Error('no fullPicture')
  return detected.body.resData.areaList.flatMap((a: { targetList: unknown[] }) => a.targetList).length
}

/** The answer's targets, for checks beyond their number. */
export async function detectTargets(client: BenchClient, target: DetectFlowTarget): Promise<{ box: { x: number; y: number; width: number; height: number } }[]> {
  const fields = { purpose: 'image', chunkIndex: 0, totalChunks: 1, totalSize: target.image.length, chunkSize: target.image.length, clientRequestId: randomUUID() }
  const uploaded = await client.postMultipart('/gtw/cwai/atomic/model/uploadTemp', fields, { name: 'image.jpg', bytes: target.image })
  const detected = await client.postJson('/gtw/cwai/aihost/PTaskDetectPic', { taskId: target.taskId, algorithmCode: target.algorithmCode, uploadId: uploaded.body.resData.uploadId })
  if (detected.body.resCode !== 1) throw new Error(JSON.stringify(detected.body))
  return detected.body.resData.areaList.flatMap((a: { targetList: unknown[] }) => a.targetList)
}
