import type { Identity } from '../handler.ts'
import type { DataUrl } from '../http/data-url.ts'
import type { AddCameraInput, UpdateCameraInput } from './inputs.ts'

/**
 * Cameras (spec 4.10 Camera, `/gtw/cwai/Camera/`): the sources continuous analysis reads.
 * `ctx.cameras` owns each camera's connection state machine (connecting → online ⇄ offline);
 * implementation in `runtime/cameras/`.
 */
export const SOURCE_TYPES = ['rtsp', 'http', 'file', 'usb'] as const
export type SourceType = (typeof SOURCE_TYPES)[number]
export type CameraStatus = 'connecting' | 'online' | 'offline'

/** A camera's source as stored: the URL without credentials, which are kept apart. */
export interface CameraSource {
  sourceType: SourceType
  /** rtsp / http: the URL without user info. */
  url: string | null
  username: string | null
  password: string | null
  /** usb: the V4L2 device path (`/dev/videoN`). */
  device: string | null
  /** file: the stored video, relative to DATA_DIR. */
  videoFile: string | null
}

/** A row of `Camera/page`: never the password (a URL's password shows as `***`). */
export interface CameraView {
  cameraId: string
  cameraName: string
  sourceType: SourceType
  url: string | null
  username: string | null
  device: string | null
  /** file: the uploaded video's original filename. */
  videoName: string | null
  status: CameraStatus
  /** Why the camera is offline (or why the last attempt failed), credentials removed. */
  lastError: string | null
  /** The catalogue key of lastError (the same key `add` or `capture` would answer). */
  lastErrorKey: string | null
  /** Of the source as decoded; null until the camera was online once since the device started. */
  width: number | null
  height: number | null
  fps: number | null
  /** ms string. */
  updateTime: string
}

export interface Capture {
  /** spec 2.6 `fullPicture` rules: a data: URI, or a URL when a file service is configured. */
  picture: string | DataUrl
  width: number
  height: number
  /** When the frame was decoded, ms since epoch. */
  timestamp: number
}

export interface UsbDevice {
  device: string
  name: string
}

export interface CamerasService {
  add(input: AddCameraInput, identity: Identity): Promise<string>
  update(input: UpdateCameraInput, identity: Identity): Promise<void>
  /**
   * Stops the reader (its ffmpeg ends) and deletes the camera and its stored video. While
   * stream tasks read the camera: CameraInUse, unless `force` (their streams end; the tasks
   * then wait with the state saying why).
   */
  remove(cameraId: string, force?: boolean): Promise<void>
  page(query: { pageNum: number; pageSize: number; cameraName?: string }): Promise<{ total: number; rows: CameraView[] }>
  /** The latest frame as a JPEG; waits for the first one while the camera connects. */
  capture(cameraId: string): Promise<Capture>
  usbList(): Promise<UsbDevice[]>
}
