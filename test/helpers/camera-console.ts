import { expect } from 'vitest'
import type { Browser } from 'playwright-core'
import { launchBrowser } from './browser.ts'
import { addRtspCamera } from './cameras.ts'
import { freePort, startDevice, type DeviceProcess } from './device.ts'
import { startRtspServer, type RtspServer } from './rtsp-server.ts'
import { PERSON_VIDEO } from './video.ts'

/** A real device with an RTSP camera looping the person footage, and Chromium to drive its console. */
export interface CameraConsole {
  device: DeviceProcess
  browser: Browser
  rtsp: RtspServer
  mtk: string
  cameraId: string
  /** POSTs to the device with the admin's mtk, expects no error and answers resData. */
  api(route: string, body: unknown): Promise<any>
  stop(): Promise<void>
}

/**
 * The set-up of the console tests of cameras (live view, recording, alarms): GStreamer's RTSP
 * server on loopback playing `../shared/media/one-by-one-person-detection.mp4`, the device
 * (`env` added to its settings) with that camera added, and Chromium. What started is stopped
 * again if a later step fails.
 */
export async function startCameraConsole(env: Record<string, string> = {}, cameraName = 'office'): Promise<CameraConsole> {
  const started: { device?: DeviceProcess; browser?: Browser; rtsp?: RtspServer } = {}
  const stop = async () => {
    await started.browser?.close()
    await started.device?.stop()
    started.device?.cleanup()
    await started.rtsp?.stop()
  }
  try {
    // All three settle before a failure is reported, so none is left running.
    const failed = (await Promise.allSettled([
      freePort().then((port) => startRtspServer(PERSON_VIDEO, port)).then((rtsp) => { started.rtsp = rtsp }),
      startDevice({ env }).then((device) => { started.device = device }),
      launchBrowser().then((browser) => { started.browser = browser }),
    ])).find((result) => result.status === 'rejected')
    if (failed) throw failed.reason
    const { device, browser } = started as Required<typeof started>
    const mtk = await device.adminToken()
    // A retry gets a server started afresh, as a camera that reboots: a GStreamer mount whose
    // first session failed under load can stay without frames for the next ones (helpers/cameras.ts).
    const restart = async () => {
      await started.rtsp!.stop()
      started.rtsp = undefined
      started.rtsp = await startRtspServer(PERSON_VIDEO, await freePort())
      return { url: started.rtsp.url, note: 'the RTSP server was started again for the retry' }
    }
    const cameraId = await addRtspCamera(device, mtk, started.rtsp!.url, cameraName, restart)
    const rtsp = started.rtsp!
    const api = async (route: string, body: unknown) => {
      const answer = (await device.post(route, body, mtk)).body
      expect(answer.resMsg, route).toEqual([])
      return answer.resData
    }
    return { device, browser, rtsp, mtk, cameraId, api, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
