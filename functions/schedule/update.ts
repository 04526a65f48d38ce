import { defineHandler } from '../../shared/handler.ts'
import { UpdateScheduleInput } from '../../shared/schedules/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/schedule/update'],
  auth: 'session',
  body: 'json',
  summary: 'Changes a schedule\'s name, windows or exceptions; the tasks and policies using it follow from their next frame, without a restart. ScheduleNotFound, InvalidParam, ScheduleNameExists.',
  input: UpdateScheduleInput,
  async handle(input, ctx) {
    return ctx.schedules.update(input)
  },
})
