import { DeviceClient, uuid } from './client.ts'
import { uploadFile, type UploadOptions, type UploadOutcome, type UploadSource } from './upload.ts'
import type { AlgorithmRow, DetectionResult } from './types.ts'

/** spec 4.3: the image-analysis client sends a fixed debug marker string. */
export const DEBUG_MARKER = 'device-client'

export interface DetectOptions extends Omit<UploadOptions, 'purpose'> {
  algorithmCode: string
  /** Client-generated task id (spec 2.4); a new UUID by default. */
  taskId?: string
  /** Keep the task for more images (default: cancel it at the end, spec 1 step 6). */
  keepTask?: boolean
  onStep?: (step: DetectStep) => void
}

export type DetectStep = 'task' | 'upload' | 'detect' | 'cancel'

export interface DetectOutcome {
  taskId: string
  upload: UploadOutcome
  result: DetectionResult
}

/** spec 2.3: runningStatus other than 0 is not shown; algorithmUsage "2" is image analysis. */
export async function imageAlgorithms(client: DeviceClient): Promise<AlgorithmRow[]> {
  const page = await client.algorithmPage({ algorithmUsage: '2' })
  return page.rows
}

/**
 * The typical flow of spec 1: create the task, upload the image in resumable chunks, detect,
 * cancel the task. The task is cancelled even when upload or detection fails (unless kept).
 */
export async function detectImage(client: DeviceClient, source: UploadSource, options: DetectOptions): Promise<DetectOutcome> {
  const taskId = options.taskId ?? uuid()
  const task = { taskId, algorithmCode: options.algorithmCode, mvDebug: DEBUG_MARKER }
  options.onStep?.('task')
  await client.taskCreate({ ...task, algorithmUpdateTime: String(Date.now()) }, { signal: options.signal })
  try {
    options.onStep?.('upload')
    const upload = await uploadFile(client, source, { ...options, purpose: 'image' })
    options.onStep?.('detect')
    const result = await client.detectPic({ taskId, algorithmCode: options.algorithmCode, uploadId: upload.uploadId }, { signal: options.signal })
    return { taskId, upload, result }
  } finally {
    if (!options.keepTask) {
      options.onStep?.('cancel')
      // A failed cancel does not hide the outcome of the detection; the task can be cancelled later.
      await client.taskCancel(task).catch(() => undefined)
    }
  }
}
