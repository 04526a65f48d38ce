import { Type } from '@sinclair/typebox'
import { toFullPicture } from '../../shared/detection/full-picture.ts'
import { decodeBase64Image, downloadImage, pickImageSource } from '../../shared/detection/image-source.ts'
import { findTask } from '../../shared/detection/task-store.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'
import type { DetectionResult, ImageSource, TaskConfig } from '../../shared/inference/types.ts'
import type { ClaimedUpload } from '../../shared/uploads/index.ts'

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
    // spec 3.2: a missing, cancelled or mismatched task → NotCreated.
    const task = await findTask(ctx.db, taskId)
    if (!task || task.state !== 'created' || task.algorithmCode !== input.algorithmCode)
      throw new ApiError('NotCreated', { details: { taskId, algorithmCode: input.algorithmCode } })
    // A created task the sidecar lost (its load failed at start): load it again.
    if (!ctx.inference.has(taskId)) await ctx.inference.load(taskId, task.algorithmCode, task.taskConfig as TaskConfig)

    let image: ImageSource
    let claim: ClaimedUpload | null = null
    if (source === 'imageBase64') image = decodeBase64Image(input.imageBase64!)
    else if (source === 'imageUrl') image = await downloadImage(input.imageUrl!, ctx)
    else {
      // spec 3.1, 5.4: the claim consumes the complete upload, for the identity that made it
      // (checked after the task, so a NotCreated never burns an upload); the sidecar reads the
      // staged file in place (no copy).
      claim = await ctx.uploads.claim(input.uploadId!, ctx.identity!, 'image')
      image = { kind: 'path', path: claim.path }
    }
    try {
      const outcome = await ctx.inference.detect({ handle: taskId, image, purpose: 'image', deadline: ctx.clock.now() + ctx.config.detectTimeoutMs })
      return {
        algorithmCode: outcome.result.algorithmCode,
        timestamp: outcome.result.timestamp,
        fullPicture: await toFullPicture(outcome.overlayJpeg!, ctx.config, ctx.clock.now()),
        areaList: outcome.result.areaList,
      }
    } finally {
      await claim?.release()
    }
  },
})
