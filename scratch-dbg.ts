import { freePort, startDevice } from './test/helpers/device.ts'
import { startRtspServer } from './test/helpers/rtsp-server.ts'
import { connectEvents } from './test/helpers/ws-client.ts'
const rtsp = await startRtspServer('/tmp/rl-exp/splice.mp4', await freePort())
const device = await startDevice({ env: { LOG_LEVEL: 'debug', RECORD_CHECK_INTERVAL_MS: '500', RECORD_CONTINUOUS_CHUNK_SECONDS: '6' } })
try {
  const mtk = await device.adminToken()
  const ws = connectEvents(device.wsPort, { mtk })
  const added = await device.post('/gtw/cwai/Camera/add', { cameraName: 'c', sourceType: 'rtsp', url: rtsp.url }, mtk)
  const cameraId = added.body.resData.cameraId
  await device.post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'events', preRollSeconds: 3, postRollSeconds: 2 }] }, mtk)
  await device.post('/v1/cwai/aihost/TaskCreate', { taskId: 'v', algorithmCode: 'person-detector', cameraId, targetFps: 5 }, mtk)
  await ws.waitFor((f) => f.type === 'event' && f.event.kind === 'recording.clipReady', 120000)
  await device.post('/v1/cwai/aihost/TaskCancle', { taskId: 'v' }, mtk)
  await device.post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'continuous', preRollSeconds: 3, postRollSeconds: 2 }] }, mtk)
  await new Promise((r) => setTimeout(r, 30000))
  const t0 = Date.parse(ws.events()[0].time)
  console.log(ws.events().map((e: any) => [e.id, e.kind, Date.parse(e.time) - t0, e.payload.startTime ? [e.payload.startTime - t0, e.payload.endTime - t0] : e.payload.reason ?? ''].join(' ')).join('\n'))
  console.log(device.logs.filter((l: any) => l.msg === 'joining a clip').map((l) => JSON.stringify(l.segments.map((s: any) => [s[0], s[1] - t0, s[2] - t0]))).join('\n'))
  console.log(device.logs.filter((l: any) => l.level >= 40 || /recording|stream copy/.test(String(l.msg))).map((l) => `${l.time - t0} ${l.msg} ${l.reason ?? ''} ${l.err ?? ''}`).join('\n'))
} finally { await device.stop(); await rtsp.stop() }
