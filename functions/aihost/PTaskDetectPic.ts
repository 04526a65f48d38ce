import { Type } from '@sinclair/typebox'
import type { Db } from '../../shared/db/client.ts'
import { toFullPicture } from '../../shared/detection/full-picture.ts'
import { decodeBase64Image, downloadImage, pickImageSource } from '../../shared/detection/image-source.ts'
import { findTask } from '../../shared/detection/task-store.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'
import type { DetectionResult, ImageSource, TaskConfig } from '../../shared/inference/types.ts'
import type { UploadLease } from '../../shared/uploads/index.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/PTaskDetectPic', '/gtw/cwai/aihost/PTaskDetectPic'],
  auth: 'session',
  body: 'json',
  summary: 'Detect on one image with a created task; synchronous result (spec 4.7, 2.6).',
  input: Type.Object({
    taskId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    algorithmCode: Type.String({ minLength: 1, maxLength: 128 }),
    uploadId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    imageBase64: Type.Optional(Type.String()),
    imageUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  }),
  async handle(input, ctx): Promise<DetectionResult> {
    const source = pickImageSource(input)
    const taskId = input.taskId ?? input.algorithmCode
    // Checked before the image is fetched, so a NotCreated costs no download or upload lease.
    await createdTask(ctx, taskId, input.algorithmCode)

    let image: ImageSource
    let lease: UploadLease | null = null
    if (source === 'imageBase64') image = decodeBase64Image(input.imageBase64!)
    else if (source === 'imageUrl') image = await downloadImage(input.imageUrl!, ctx)
    else {
      // spec 3.1, 5.4: the complete upload, for the identity that made it; spec 4.7: consumed
      // only by a successful detection (a failed one leaves it for a retry). The sidecar
      // reads the staged file in place (no copy).
      lease = await ctx.uploads.lease(input.uploadId!, ctx.identity!, 'image')
      image = { kind: 'path', path: lease.path }
    }
    try {
      // spec 3.2: the state check, a load on demand and the detection going in flight happen
      // under the task's lock, so a PTaskCancle cannot slip between them (it then sees the
      // detection and answers TaskBusy, or the detection sees the task cancelled).
      const { running } = await ctx.inference.exclusive(taskId, async () => {
        const task = await createdTask(ctx, taskId, input.algorithmCode)
        // A created task the sidecar does not hold (its restore failed): load it again.
        if (!ctx.inference.has(taskId)) await ctx.inference.load(taskId, task.algorithmCode, task.taskConfig as TaskConfig)
        const running = ctx.inference.detect({ handle: taskId, image, purpose: 'image', deadline: ctx.clock.now() + ctx.config.detectTimeoutMs })
        running.catch(() => {}) // awaited below, once the lock is free
        return { running }
      })
      const outcome = await running
      const result: DetectionResult = {
        algorithmCode: outcome.result.algorithmCode,
        timestamp: outcome.result.timestamp,
        fullPicture: await toFullPicture(outcome.overlayJpeg!, ctx.config, ctx.clock.now()),
        areaList: outcome.result.areaList,
      }
      await lease?.commit()
      return result
    } catch (error) {
      await lease?.abandon()
      throw error
    }
  },
})

/** spec 3.2: a missing, cancelled or mismatched task → NotCreated. */
async function createdTask(ctx: { db: Db }, taskId: string, algorithmCode: string) {
  const task = await findTask(ctx.db, taskId)
  if (!task || task.state !== 'created' || task.algorithmCode !== algorithmCode)
    throw new ApiError('NotCreated', { details: { taskId, algorithmCode } })
  return task
}
