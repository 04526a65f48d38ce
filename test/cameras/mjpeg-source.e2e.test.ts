import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import sharp from 'sharp'
import { expect } from 'vitest'
import { freePort, type DeviceProcess } from '../helpers/device.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { childProcesses, until } from '../helpers/processes.ts'
import { FFMPEG, PERSON_VIDEO, videoFacts } from '../helpers/video.ts'

// The `http` source's MJPEG kind (runtime/cameras/sources/mjpeg.ts) against a real MJPEG
// stream: ffmpeg's own mpjpeg muxer encoding the person video, served by a node HTTP server on loopback.
test.override('deviceOptions', { env: { CAMERA_CONNECT_TIMEOUT_MS: '8000', CAMERA_STALL_TIMEOUT_MS: '5000' } })

test.describe('an HTTP MJPEG camera read from a real mpjpeg stream', () => {
  const facts = videoFacts(PERSON_VIDEO)
  let server: Server
  let streamUrl: string
  const encoders = new Set<ChildProcess>()

  test.beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url !== '/stream') return response.writeHead(404).end()
      // ffmpeg's mpjpeg muxer writes parts separated by its default boundary, "ffmpeg".
      const encoder = spawn(FFMPEG, ['-v', 'error', '-re', '-stream_loop', '-1', '-i', PERSON_VIDEO, '-an', '-c:v', 'mjpeg', '-q:v', '5', '-f', 'mpjpeg', 'pipe:1'], { stdio: ['ignore', 'pipe', 'ignore'] })
      encoders.add(encoder)
      encoder.once('exit', () => encoders.delete(encoder))
      response.writeHead(200, { 'content-type': 'multipart/x-mixed-replace;boundary=ffmpeg' })
      encoder.stdout!.pipe(response)
      request.socket.once('close', () => encoder.kill('SIGKILL'))
    })
    const port = await freePort()
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    streamUrl = `http://127.0.0.1:${port}/stream`
  })
  test.afterAll(() => {
    for (const encoder of encoders) encoder.kill('SIGKILL')
    server?.close()
  })

  test('is online at the video\'s size, read by ffmpeg\'s mpjpeg demuxer; capture is a JPEG of that size; delete ends its reader', async ({ device, mtk }: { device: DeviceProcess; mtk: string }) => {
    const call = (route: string, body: unknown) => device.post(`/gtw/cwai/Camera/${route}`, body, mtk)
    const added = await call('add', { cameraName: 'mpjpeg', sourceType: 'http', url: streamUrl })
    expect(added.body.resCode).toBe(1)
    const cameraId = added.body.resData.cameraId as string
    const rows = (await call('page', { pageNum: 1, pageSize: 10 })).body.resData.rows
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ cameraId, sourceType: 'http', url: streamUrl, status: 'online', width: facts.width, height: facts.height, lastErrorKey: null })
    // The camera's one reader: ffmpeg told the input is mpjpeg, reading the stream's URL.
    const readers = childProcesses(device.process.pid!, 'ffmpeg')
    expect(readers).toHaveLength(1)
    const argv = readFileSync(`/proc/${readers[0]}/cmdline`, 'utf8').split('\0')
    const input = argv.indexOf('-i')
    expect(argv.slice(input - 2, input + 2)).toEqual(['-f', 'mpjpeg', '-i', streamUrl])
    const capture = await call('capture', { cameraId })
    expect(capture.body.resCode).toBe(1)
    const jpeg = Buffer.from((capture.body.resData.picture as string).slice('data:image/jpeg;base64,'.length), 'base64')
    expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: facts.width, height: facts.height })
    expect((await call('delete', { cameraId })).body.resCode).toBe(1)
    await until(async () => childProcesses(device.process.pid!, 'ffmpeg').length === 0, 'the MJPEG camera\'s ffmpeg to end')
  })
})
