import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/Restart'],
  auth: 'session',
  body: 'json',
  summary: 'Restarts the device service (not the operating system) through its supervisor; a staged upgrade is installed on the way.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    if (!ctx.device.supervised) throw new ApiError('UpgradeNotSupervised', { details: { start: 'npm start' } })
    ctx.device.requestRestart(`requested by ${ctx.identity?.accountName ?? 'unknown'}`)
    // spec 4.11: the restarted device has a new bootId (osBootId stays: the OS does not reboot).
    return { restarting: true, softwareVersion: ctx.process.softwareVersion }
  },
})
