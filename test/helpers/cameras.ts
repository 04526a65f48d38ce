import { expect } from 'vitest'
import type { DeviceProcess } from './device.ts'

/**
 * Adds an RTSP camera and returns its id. A just-started RTSP server can refuse the first
 * session while it prepares the media under load: the device answers retryable, and this
 * retries as a client is told to.
 */
export async function addRtspCamera(device: DeviceProcess, mtk: string, url: string, cameraName = 'office'): Promise<string> {
  let added = await device.post('/gtw/cwai/Camera/add', { cameraName, sourceType: 'rtsp', url }, mtk)
  for (let retry = 0; retry < 3 && added.body.resMsg[0]?.retryable; retry++) {
    await new Promise((resolve) => setTimeout(resolve, 1000 * (added.body.resMsg[0].retryAfterSeconds ?? 1)))
    added = await device.post('/gtw/cwai/Camera/add', { cameraName, sourceType: 'rtsp', url }, mtk)
  }
  expect(added.body.resMsg).toEqual([])
  return added.body.resData.cameraId as string
}
