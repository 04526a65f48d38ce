import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/Upgrade'],
  auth: 'session',
  body: 'json',
  summary: 'Validates an uploaded upgrade package (name, MD5, archive safety, layout), stages it and restarts into it.',
  input: Type.Object({
    uploadId: Type.String({ minLength: 1, maxLength: 128 }),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    // spec 4.11: the supervisor revalidates and installs at the restart; softwareVersion changes only then.
    const staged = await ctx.upgrade.stage(ctx.identity!, input.uploadId)
    return { version: staged.version, fromVersion: staged.fromVersion, stagedAt: String(staged.stagedAt), restarting: true }
  },
})
