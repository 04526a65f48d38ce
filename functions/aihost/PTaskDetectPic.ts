import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import type { DetectionResult } from '../../shared/inference/types.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/PTaskDetectPic', '/gtw/cwai/aihost/PTaskDetectPic'],
  auth: 'session',
  body: 'json',
  summary: 'Detect on one image with a created task; synchronous result (spec 4.7, 2.6).',
  input: Type.Object({
    taskId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    algorithmCode: Type.String({ minLength: 1, maxLength: 128 }),
    // spec 4.7: exactly one image source.
    uploadId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    imageBase64: Type.Optional(Type.String()),
    imageUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  }),
  handle(input, ctx): Promise<DetectionResult> {
    const { uploadId, imageBase64, imageUrl } = input
    return ctx.tasks.detect({
      taskId: input.taskId ?? input.algorithmCode,
      algorithmCode: input.algorithmCode,
      image: { uploadId, imageBase64, imageUrl },
      identity: ctx.identity!,
      signal: ctx.signal,
    })
  },
})
