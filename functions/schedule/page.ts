import { defineHandler } from '../../shared/handler.ts'
import { PageSchedulesInput } from '../../shared/schedules/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/schedule/page'],
  auth: 'session',
  body: 'json',
  summary: 'Pages through the schedules, oldest first, each with whether it is on now, its next change and its users; with the schedules\' clock (`now`, `localTime`, `timeZone`).',
  input: PageSchedulesInput,
  async handle(input, ctx) {
    return ctx.schedules.page(input)
  },
})
