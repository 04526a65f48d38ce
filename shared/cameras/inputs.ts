import { Type, type Static } from '@sinclair/typebox'
import { SOURCE_TYPES } from './types.ts'

/** TypeBox inputs of the Camera routes (spec 4.10), shared by the handlers and the documents. */
export const CameraId = Type.String({ minLength: 1, maxLength: 64, description: 'The id `add` answered.' })
const Name = Type.String({ minLength: 1, maxLength: 128 })
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'rtsp: rtsp:// or rtsps:// URL (RTSP over TCP); http: a JPEG snapshot URL or an MJPEG stream (http:// or https://). Credentials may be in the URL or in username/password.' })
const UploadId = Type.String({ minLength: 1, maxLength: 200, description: 'file: a completed upload with purpose `video` (played in a loop at its own rate).' })
const Device = Type.String({ minLength: 1, maxLength: 64, description: 'usb: a V4L2 device path, /dev/videoN (see usbList).' })
const Username = Type.String({ maxLength: 256 })
const Password = Type.String({ maxLength: 256, description: 'Stored for the device to connect; never returned, never logged.' })
const Verify = Type.Boolean({ default: true, description: 'Connect to the source first and refuse it with its error (default true); false stores it and keeps retrying.' })

export const AddCameraInput = Type.Object({
  cameraName: Name,
  sourceType: Type.Union(SOURCE_TYPES.map((t) => Type.Literal(t))),
  url: Type.Optional(Url),
  uploadId: Type.Optional(UploadId),
  device: Type.Optional(Device),
  username: Type.Optional(Username),
  password: Type.Optional(Password),
  verify: Type.Optional(Verify),
}, { additionalProperties: false })
export type AddCameraInput = Static<typeof AddCameraInput>

export const UpdateCameraInput = Type.Object({
  cameraId: CameraId,
  cameraName: Type.Optional(Name),
  url: Type.Optional(Url),
  uploadId: Type.Optional(UploadId),
  device: Type.Optional(Device),
  username: Type.Optional(Username),
  password: Type.Optional(Type.String({ maxLength: 256, description: 'Omitted: unchanged; empty string: removed.' })),
  verify: Type.Optional(Verify),
}, { additionalProperties: false })
export type UpdateCameraInput = Static<typeof UpdateCameraInput>

export const PageCamerasInput = Type.Object({
  pageNum: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  pageSize: Type.Integer({ minimum: 1, maximum: 500, default: 20 }),
  cameraName: Type.Optional(Type.String({ maxLength: 128, description: 'Substring of the name.' })),
}, { additionalProperties: false })

export const CameraIdInput = Type.Object({ cameraId: CameraId }, { additionalProperties: false })

export const DeleteCameraInput = Type.Object({
  cameraId: CameraId,
  force: Type.Optional(Type.Boolean({ default: false, description: 'Delete even while stream tasks analyse the camera (they then wait, state `cameraDeleted`).' })),
}, { additionalProperties: false })
