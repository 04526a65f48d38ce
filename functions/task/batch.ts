import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { isApiError } from '../../shared/errors/index.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Task/batch'],
  auth: 'session',
  body: 'json',
  summary: 'Starts (enables), stops (disables) or deletes several stream tasks (spec 4.10 Task); answers each task\'s outcome, one failure does not stop the others.',
  input: Type.Object({
    action: Type.Union([Type.Literal('start'), Type.Literal('stop'), Type.Literal('delete')]),
    taskIds: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 256, uniqueItems: true }),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    const rows = []
    for (const taskId of input.taskIds) {
      try {
        if (input.action === 'delete') await ctx.streams.cancel(taskId)
        else await ctx.streams.setEnabled(taskId, input.action === 'start')
        rows.push({ taskId, ok: true, messageKey: null })
      } catch (error) {
        if (!isApiError(error)) throw error
        rows.push({ taskId, ok: false, messageKey: error.item.messageKey })
      }
    }
    return { rows }
  },
})
