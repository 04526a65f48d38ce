import { defineHandler } from '../../shared/handler.ts'
import { CameraIdInput } from '../../shared/cameras/inputs.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Camera/delete'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes a camera (spec 4.10 Camera): its reader stops and a file camera\'s stored video is removed. CameraNotFound.',
  input: CameraIdInput,
  async handle(input, ctx) {
    await ctx.cameras.remove(input.cameraId)
    return undefined
  },
})
