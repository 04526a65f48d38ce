import { defineHandler } from '../../shared/handler.ts'
import { UpdateCameraInput } from '../../shared/cameras/inputs.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Camera/update'],
  auth: 'session',
  body: 'json',
  summary: 'Changes a camera\'s name or source (spec 4.10 Camera); a new source is connected first unless verify is false, and the old one is kept when it fails (same errors as add).',
  input: UpdateCameraInput,
  async handle(input, ctx) {
    await ctx.cameras.update(input, ctx.identity!)
    return undefined
  },
})
