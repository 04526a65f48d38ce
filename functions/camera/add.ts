import { defineHandler } from '../../shared/handler.ts'
import { AddCameraInput } from '../../shared/cameras/inputs.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Camera/add'],
  auth: 'session',
  body: 'json',
  summary: 'Adds a camera (spec 4.10 Camera): rtsp URL, http snapshot/MJPEG URL, file (uploadId of a `video` upload, looped) or usb device. Connects first unless verify is false: CameraUrlInvalid, CameraUnreachable, CameraAuthFailed, CameraStreamNotFound, CameraUnsupportedCodec.',
  input: AddCameraInput,
  async handle(input, ctx) {
    return { cameraId: await ctx.cameras.add(input, ctx.identity!) }
  },
})
