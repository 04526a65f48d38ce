import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/SetLogo'],
  auth: 'session',
  body: 'json',
  summary: 'Replaces the logo with a completed upload of purpose `logo` (spec 4.10 System, 4.12): PNG or JPEG as it is, SVG sanitised (scripts, event handlers, external references and unknown elements removed, named in `removed`; a DOCTYPE refused). At most LOGO_MAX_BYTES and 4096 pixels a side; LogoInvalid (the upload stays usable).',
  input: Type.Object({ uploadId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.logo.set(input.uploadId, ctx.identity!)
  },
})
