import { FleetPushInput } from '../../shared/fleet/types.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Fleet/push'],
  auth: 'session',
  body: 'json',
  summary: 'Pushes an algorithm or upgrade package, uploaded to this device (purpose = kind), to several devices of the fleet as device-cli fleet push-* does: signs in on each at the HTTP address of its retained registration with the account and password digest given, uploads in chunks, installs (an upgrade: confirmed by its registration after the restart). Answers at once with a pushId; Fleet/pushStatus tells each device\'s progress and result. Only devices announced on the broker are contacted.',
  input: FleetPushInput,
  async handle(input, ctx) {
    // Refused before the upload is consumed (busy, no broker): the same uploadId can be sent again.
    ctx.events.fleet.assertCanPush()
    // spec 3.1, 5.4: consumed once, by the identity that uploaded it, for this purpose; kept past
    // the upload idle timeout (a push to many or slow devices lasts longer) and released when the push ends.
    const file = await ctx.uploads.claim(input.uploadId, ctx.identity!, input.kind, { keepUntilRelease: true })
    try {
      const push = ctx.events.fleet.push({ kind: input.kind, deviceIds: input.deviceIds, replace: input.replace ?? false, account: input.account, pwdMd5: input.pwd.toLowerCase(), file })
      ctx.log.info({ pushId: push.pushId, kind: input.kind, devices: input.deviceIds, size: file.size }, 'fleet push started')
      return push
    } catch (error) {
      await file.release()
      throw error
    }
  },
})
