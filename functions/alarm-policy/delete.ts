import { PolicyIdInput } from '../../shared/alarms/types.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/AlarmStrage/delete'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes an alarm policy; its past alarms stay in the event history. AlarmPolicyNotFound.',
  input: PolicyIdInput,
  async handle(input, ctx) {
    await ctx.alarms.remove(input.policyId)
    return undefined
  },
})
