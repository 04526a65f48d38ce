import { PagePoliciesInput } from '../../shared/alarms/types.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/AlarmStrage/page'],
  auth: 'session',
  body: 'json',
  summary: 'Pages through the alarm policies, oldest first, filtered by name, task or camera; webhook secrets show only as secretSet.',
  input: PagePoliciesInput,
  async handle(input, ctx) {
    return ctx.alarms.page(input)
  },
})
