import { request } from 'node:http'
import net from 'node:net'
import { md5Hex } from '../../shared/auth/password.ts'
import type { DeviceProcess } from '../../test/helpers/device.ts'
import { envelopeViolation, type Answer } from './lib.ts'

/**
 * Hand-made hostile requests the generated fuzz does not produce (docs/sign-in-and-errors.md,
 * docs/events.md, docs/system.md): odd HTTP framing on one route, a flood of wrong current
 * passwords, MQTT TLS files sent with MQTT disabled, and log ids naming other files. Each
 * yields the problems it found; none changes the suite's session or settings.
 */
export async function hostileRequests(device: DeviceProcess, mtk: string): Promise<{ requests: number; problems: string[] }> {
  const problems: string[] = []
  let requests = 0
  const note = (what: string, problem: string | null) => { requests++; if (problem) problems.push(`${what}: ${problem}`) }

  // Framing: every request on the connection gets an answer in the envelope (spec 2.1).
  const route = '/v1/cwai/aihost/PTaskCancle'
  const head = (body: string, extra = '', length: string | number = Buffer.byteLength(body)) =>
    `POST ${route} HTTP/1.1\r\nHost: device\r\nmtk: ${mtk}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n${body}`
  const framing: [string, string, number][] = [
    ['Expect: 100-continue', head('{"taskId":"x"}', 'Expect: 100-continue\r\n'), 1],
    ['unknown Expect', head('{"taskId":"x"}', 'Expect: nothing-known\r\n'), 1],
    ['three pipelined', head('{"taskId":"x"}') + head('[]') + head('{"taskId":"y","taskId":"z"}'), 3],
    ['huge Content-Length', head('{}', '', 10 ** 12), 1],
    ['negative Content-Length', head('{}', '', -1), 1],
    ['body shorter than its length, then closed', head('{"taskId"', '', 100), 1],
    ['chunked, malformed', `POST ${route} HTTP/1.1\r\nHost: device\r\nmtk: ${mtk}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`, 1],
    ['deep JSON', head('['.repeat(100_000) + ']'.repeat(100_000)), 1],
    ['non-JSON, text/plain', head('hello').replace('application/json', 'text/plain'), 1],
    ['invalid UTF-8', head('{"taskId":"\udc00\ud800"}'), 1],
  ]
  for (const [what, text, expected] of framing) {
    const raw = await rawExchange(device.port, text)
    const answers = [...raw.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n/g)].filter((m) => m[1] !== '100')
    note(`framing: ${what}`, answers.length >= expected ? null : `${answers.length} answers to ${expected} requests (${JSON.stringify(raw.slice(0, 160))})`)
    const body = raw.slice(raw.lastIndexOf('\r\n\r\n') + 4)
    let parsed: unknown = body
    try { parsed = JSON.parse(body) } catch { /* checked below */ }
    const status = Number(answers.at(-1)?.[1] ?? 0)
    if (answers.length) note(`framing: ${what} (envelope)`, envelopeViolation({ status, body: parsed, contentType: 'application/json' }))
  }

  // A flood of wrong current passwords from forty addresses: each answered within 5 s.
  const flood = await Promise.all(Array.from({ length: 40 }, (_, i) => timedPost(device.port, `127.0.3.${i + 1}`, '/gtw/cwai/login/ChangePassword',
    { oldPwd: md5Hex(`wrong-${i}`), newPwd: md5Hex('flood-Passw0rd') }, mtk)))
  for (const [i, answer] of flood.entries()) {
    const key = answer.body?.resMsg?.[0]?.messageKey
    note(`ChangePassword flood #${i}`, envelopeViolation(answer) ?? (answer.ms > 5000 ? `answered after ${Math.round(answer.ms)} ms` : null) ??
      (['api.error.LoginFailed', 'api.error.LoginBusy', 'api.error.LoginLocked'].includes(key) ? null : `answered ${key ?? answer.body?.resCode}`))
    if (key === 'api.error.LoginBusy' && !(answer.body.resMsg[0].details?.retryAfterSeconds >= 1)) problems.push(`ChangePassword flood #${i}: LoginBusy without details.retryAfterSeconds`)
  }

  // MQTT TLS files are refused with MQTT disabled as with it enabled.
  for (const caFile of ['/etc/hostname', '/nonexistent/ca.pem']) {
    const answer = await timedPost(device.port, '127.0.0.1', '/gtw/cwai/System/SetMqttParam', { enabled: false, url: 'mqtts://127.0.0.1:8883', caFile }, mtk)
    const item = answer.body?.resMsg?.[0]
    note(`SetMqttParam disabled, caFile ${caFile}`, item?.messageKey === 'api.error.InvalidParam' && item.details?.field === '/caFile' ? null : `answered ${JSON.stringify(answer.body).slice(0, 200)}`)
  }

  // Log ids: never another file; malformed 400, unknown 404, both in the envelope.
  for (const [id, status] of [['../../device.db', 400], ['%zz', 400], ['-1', 400], ['device.999999.log', 404]] as const) {
    const response = await fetch(`${device.url}/gtw/cwai/System/DownloadLog?id=${id}`, { headers: { mtk } })
    const text = await response.text()
    let body: unknown = text
    try { body = JSON.parse(text) } catch { /* checked below */ }
    const answer: Answer = { status: response.status, body, contentType: response.headers.get('content-type') ?? '' }
    note(`DownloadLog?id=${id}`, response.status === status ? envelopeViolation(answer) : `HTTP ${response.status}, expected ${status}`)
  }
  return { requests, problems }
}

/** Writes `text` on a fresh connection, half-closes it, and returns what came back before the server closed (or 5 s). */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let data = ''
    const timer = setTimeout(() => socket.destroy(), 5000)
    socket.on('data', (chunk) => { data += chunk.toString('latin1') })
    socket.on('error', () => {})
    socket.on('close', () => { clearTimeout(timer); resolve(data) })
    socket.end(text)
  })
}

function timedPost(port: number, localAddress: string, path: string, body: unknown, mtk: string): Promise<Answer & { ms: number }> {
  const data = JSON.stringify(body)
  const started = performance.now()
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), mtk } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { text += chunk })
      res.on('end', () => {
        let parsed: unknown = text
        try { parsed = JSON.parse(text) } catch { /* not JSON */ }
        resolve({ status: res.statusCode!, body: parsed, contentType: String(res.headers['content-type'] ?? ''), ms: performance.now() - started })
      })
    })
    req.on('error', (error) => resolve({ status: 0, body: `no answer: ${error.message}`, contentType: '', ms: performance.now() - started }))
    req.end(data)
  })
}
