import { defineHandler } from '../../shared/handler.ts'
import { ScheduleIdInput } from '../../shared/schedules/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/schedule/query'],
  auth: 'session',
  body: 'json',
  summary: 'One schedule: its windows and exceptions, whether it is on now and its next change (ms and local time), the tasks and policies using it, and the schedules\' clock. ScheduleNotFound.',
  input: ScheduleIdInput,
  async handle(input, ctx) {
    return { ...(await ctx.schedules.get(input.scheduleId)), ...ctx.schedules.clockInfo() }
  },
})
