import { defineHandler } from '../../shared/handler.ts'
import { PageCamerasInput } from '../../shared/cameras/inputs.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Camera/page'],
  auth: 'session',
  body: 'json',
  summary: 'Pages through the cameras with their live status (online, connecting, offline), last error, size and frame rate (spec 4.10 Camera); passwords never appear (`***` in URLs).',
  input: PageCamerasInput,
  async handle(input, ctx) {
    return ctx.cameras.page(input)
  },
})
