import { defineHandler } from '../../shared/handler.ts'
import { AddScheduleInput } from '../../shared/schedules/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/schedule/add'],
  auth: 'session',
  body: 'json',
  summary: 'Adds a schedule (spec 4.10 Schedule): weekly windows in the device\'s time zone (several a day; an end at or before the start runs into the next day) and date exceptions that replace a day\'s windows (none: a holiday). InvalidParam, ScheduleNameExists.',
  input: AddScheduleInput,
  async handle(input, ctx) {
    return ctx.schedules.add(input, ctx.identity!)
  },
})
