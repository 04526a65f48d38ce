import { expect } from 'vitest'
import { freePort, type DeviceProcess } from './device.ts'
import { startRtspServer, type RtspServer } from './rtsp-server.ts'

/**
 * Adds an RTSP camera and returns its id. A just-started RTSP server can refuse the first
 * session while it prepares the media under load: the device answers retryable, and this
 * retries as a client is told to. `beforeRetry` may answer another URL to retry with (a
 * server started again) and a note for the failure message.
 */
export async function addRtspCamera(
  device: DeviceProcess, mtk: string, url: string, cameraName = 'office',
  beforeRetry?: () => Promise<{ url: string; note?: string } | void>,
): Promise<string> {
  const notes: string[] = []
  const add = () => device.post('/gtw/cwai/Camera/add', { cameraName, sourceType: 'rtsp', url }, mtk)
  let added = await add()
  for (let retry = 0; retry < 3 && added.body.resMsg[0]?.retryable; retry++) {
    await new Promise((resolve) => setTimeout(resolve, 1000 * (added.body.resMsg[0].retryAfterSeconds ?? 1)))
    const next = await beforeRetry?.()
    if (next) {
      url = next.url
      if (next.note) notes.push(next.note)
    }
    added = await add()
  }
  expect(added.body.resMsg, notes.join(', ')).toEqual([])
  return added.body.resData.cameraId as string
}

/** A camera on an RTSP server of its own, and that server (stopped by the caller). */
export interface FootageCamera {
  cameraId: string
  server: RtspServer
}

/**
 * A camera on an RTSP server of its own, playing `file` from its start. (A GStreamer mount
 * shared by a client that left and one that joined later delivered a frame every few seconds
 * to the newcomer: each camera has its own.) A just-started server can answer the first session
 * with an error while it prepares the media: retried as the device advises, and a server ended
 * from outside (by another process on this machine) is started again.
 */
export async function addFootageCamera(device: DeviceProcess, mtk: string, cameraName: string, file: string): Promise<FootageCamera> {
  let server = await startRtspServer(file, await freePort())
  const restartIfEnded = async () => {
    if (server.process.exitCode === null && server.process.signalCode === null) return
    const note = `server exited: ${server.process.exitCode ?? server.process.signalCode}`
    server = await startRtspServer(file, await freePort())
    return { url: server.url, note }
  }
  try {
    return { cameraId: await addRtspCamera(device, mtk, server.url, cameraName, restartIfEnded), server }
  } catch (error) {
    await server.stop()
    throw error
  }
}

/** What a footage test calls on its device: any route, one that must succeed, a task's status, cameras of its own. */
export interface FootageApi {
  post(route: string, body: unknown): ReturnType<DeviceProcess['post']>
  /** POSTs, expects no error and answers resData. */
  ok(route: string, body: unknown): Promise<any>
  status(taskId: string): Promise<any>
  /** A camera playing `file` from its start on an RTSP server of its own (addFootageCamera); answers its cameraId. */
  addCamera(cameraName: string): Promise<string>
  /** Stops the RTSP servers of the cameras added so far. */
  stopCameras(): Promise<void>
}

export function footageApi(device: DeviceProcess, mtk: string, file: string): FootageApi {
  const servers: RtspServer[] = []
  const post = (route: string, body: unknown) => device.post(route, body, mtk)
  return {
    post,
    async ok(route, body) {
      const answer = await post(route, body)
      expect(answer.body.resMsg, `${route} ${JSON.stringify(answer.body.resMsg)}`).toEqual([])
      return answer.body.resData
    },
    status: async (taskId) => (await post('/v1/cwai/aihost/QueryTaskStatus', { taskId })).body.resData,
    async addCamera(cameraName) {
      const camera = await addFootageCamera(device, mtk, cameraName, file)
      servers.push(camera.server)
      return camera.cameraId
    },
    async stopCameras() {
      for (const server of servers.splice(0)) await server.stop()
    },
  }
}
