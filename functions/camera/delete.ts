import { defineHandler } from '../../shared/handler.ts'
import { DeleteCameraInput } from '../../shared/cameras/inputs.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Camera/delete'],
  auth: 'session',
  body: 'json',
  summary: 'Deletes a camera (spec 4.10 Camera): its reader stops and a file camera\'s stored video is removed. CameraNotFound; CameraInUse while stream tasks analyse it, unless force.',
  input: DeleteCameraInput,
  async handle(input, ctx) {
    await ctx.cameras.remove(input.cameraId, input.force)
    return undefined
  },
})
