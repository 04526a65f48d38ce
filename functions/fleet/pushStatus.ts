import { FleetPushStatusInput } from '../../shared/fleet/types.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Fleet/pushStatus'],
  auth: 'session',
  body: 'json',
  summary: 'The progress and result of a Fleet/push on each device: phase (queued, connecting, uploading with percent, installing, restarting, confirming, done, failed), outcome, the device\'s own error (messageKey, msgText, recommendedAction, details). FleetPushNotFound when not kept.',
  input: FleetPushStatusInput,
  async handle(input, ctx) {
    return ctx.events.fleet.pushStatus(input.pushId)
  },
})
