import { SwitchPolicyInput } from '../../shared/alarms/types.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/AlarmStrage/switch'],
  auth: 'session',
  body: 'json',
  summary: 'Switches alarm policies on or off without deleting them; applies from the tasks\' next frame. AlarmPolicyNotFound (details.policyIds: the unknown ones; nothing changes).',
  input: SwitchPolicyInput,
  async handle(input, ctx) {
    return { rows: await ctx.alarms.setEnabled(input.policyIds, input.enabled) }
  },
})
