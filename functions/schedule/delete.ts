import { defineHandler } from '../../shared/handler.ts'
import { ScheduleIdInput } from '../../shared/schedules/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/schedule/delete'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes a schedule. ScheduleNotFound; ScheduleInUse (details.taskIds, details.policies) while stream tasks or alarm policies use it.',
  input: ScheduleIdInput,
  async handle(input, ctx) {
    await ctx.schedules.remove(input.scheduleId)
    return undefined
  },
})
