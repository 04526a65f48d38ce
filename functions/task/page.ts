import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Task/page'],
  auth: 'session',
  body: 'json',
  summary: 'Pages through the stream tasks with their run details (spec 4.10 Task): state, enabled, rates, drops, motion skips, latencies, last error.',
  input: Type.Object({
    pageNum: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
    pageSize: Type.Integer({ minimum: 1, maximum: 500, default: 20 }),
    cameraId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const all = ctx.streams.list().filter((task) => !input.cameraId || task.cameraId === input.cameraId)
    return { total: all.length, rows: all.slice((input.pageNum - 1) * input.pageSize, input.pageNum * input.pageSize) }
  },
})
