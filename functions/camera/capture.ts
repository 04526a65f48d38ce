import { defineHandler } from '../../shared/handler.ts'
import { CameraIdInput } from '../../shared/cameras/inputs.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Camera/capture'],
  auth: 'session',
  body: 'json',
  summary: 'Captures the camera\'s current frame as a JPEG (spec 4.10 Camera): `{picture, width, height, timestamp}`, picture as spec 2.6 fullPicture (data: URI, or a URL with a file service). Waits for the first frame while the camera connects; an offline camera answers its error.',
  input: CameraIdInput,
  async handle(input, ctx) {
    const capture = await ctx.cameras.capture(input.cameraId)
    return { picture: capture.picture, width: capture.width, height: capture.height, timestamp: String(capture.timestamp) }
  },
})
