import { UpdatePolicyInput } from '../../shared/alarms/types.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/AlarmStrage/update'],
  auth: 'session',
  body: 'json',
  summary: 'Changes an alarm policy; it applies from the tasks\' next frame. `actions` replace the old ones (a webhook action without `secret` keeps the secret of the same URL). The errors of add, and AlarmPolicyNotFound.',
  input: UpdatePolicyInput,
  async handle(input, ctx) {
    return ctx.alarms.update(input)
  },
})
