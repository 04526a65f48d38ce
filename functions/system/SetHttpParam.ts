import { defineHandler } from '../../shared/handler.ts'
import { presentWebhook } from '../../shared/events/present.ts'
import { WebhookSettingsPatch } from '../../shared/events/settings-schema.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/SetHttpParam'],
  auth: 'session',
  body: 'json',
  summary: 'Set HTTP webhook event-channel parameters: validated, stored, applied at once (the webhook senders are replaced; no restart) (spec 4.10).',
  input: WebhookSettingsPatch,
  async handle(input, ctx) {
    return presentWebhook(await ctx.events.settings.setWebhook(input))
  },
})
