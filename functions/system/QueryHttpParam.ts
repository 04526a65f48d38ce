import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { presentWebhook } from '../../shared/events/present.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryHttpParam'],
  auth: 'session',
  body: 'json',
  summary: 'Current HTTP webhook event-channel parameters (stored settings over configuration defaults; secrets are reported only as set or not) (spec 4.10).',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    return presentWebhook(await ctx.events.settings.getWebhook())
  },
})
