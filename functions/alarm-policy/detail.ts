import { PolicyIdInput } from '../../shared/alarms/types.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/AlarmStrage/detail'],
  auth: 'session',
  body: 'json',
  summary: 'One alarm policy. AlarmPolicyNotFound.',
  input: PolicyIdInput,
  async handle(input, ctx) {
    return ctx.alarms.get(input.policyId)
  },
})
