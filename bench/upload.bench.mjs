// Upload throughput benchmark (spec 4.5, 4.12): a 256 MB file in 8 MB chunks over loopback
// through `uploadTemp` on the real runtime, against a bare Node HTTP server that streams the
// same request bodies to disk, measured in the same run. Also samples the runtime's RSS.
//
//   npm run bench -- upload   (or: node build.mjs && node --import tsx bench/upload.bench.mjs)
//   → bench/out/upload.json in the report contract of bench/lib/report.ts
//
// Each side gets ROUNDS uploads, alternating, and the best round counts (least disturbed by
// the rest of the machine); the median of paired round ratios and the load average are
// recorded too, since a shared 2-core machine makes single rounds vary a lot. No sha256 is sent, so both sides do the same work: receive,
// parse, write. Gates: runtime ≥ 80 % of the baseline's throughput, RSS growth < 64 MB.
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { loadavg } from 'node:os'
import { runtimeNodeArgs } from './lib/device-process.ts'
import { figure, writeReport } from './lib/report.ts'

const MB = 1024 * 1024
const FILE_BYTES = Number(process.env.BENCH_FILE_MB ?? 256) * MB
const CHUNK_BYTES = 8 * MB
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const root = path.resolve(import.meta.dirname, '..')
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const md5 = (text) => createHash('md5').update(text).digest('hex')

function post(port, route, body, headers) {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: route, method: 'POST', agent, headers: { 'content-length': body.length, ...headers } }, (response) => {
      const parts = []
      response.on('data', (part) => parts.push(part))
      response.on('end', () => resolve({ status: response.statusCode, text: Buffer.concat(parts).toString() }))
    })
    request.on('error', reject)
    request.end(body)
  })
}
const postJson = async (port, route, body, mtk) => JSON.parse((await post(port, route, Buffer.from(JSON.stringify(body)), { 'content-type': 'application/json', ...(mtk ? { mtk } : {}) })).text)

/** The multipart body of one chunk: fields first, then the file part (as browsers send it). */
function multipartChunk(fields, data) {
  const boundary = `----bench${randomBytes(8).toString('hex')}`
  const head = Object.entries(fields).map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('')
  const body = Buffer.concat([
    Buffer.from(`${head}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    data, Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  return { body, contentType: `multipart/form-data; boundary=${boundary}` }
}

function startProcess(args, env) {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  const port = new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line)
        if (entry.msg === 'listening' || entry.listening) resolve(entry.port)
        if (process.env.BENCH_TRACE && entry.msg === 'request') console.error('REQ', entry.path, entry.ms)
      } catch { /* not a log line */ }
    })
    child.once('exit', (code) => reject(new Error(`process exited with ${code}`)))
  })
  return { child, port }
}

/** Samples a process's resident set size from /proc every 20 ms. */
function rssSampler(pid) {
  const read = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
  const start = read()
  let max = start
  const timer = setInterval(() => { max = Math.max(max, read()) }, 20)
  return { start, stop: () => { clearInterval(timer); max = Math.max(max, read()); return { startBytes: start, maxBytes: max, growthBytes: max - start } } }
}

const BARE_SERVER = `
const http = require('node:http'); const fs = require('node:fs'); const path = require('node:path')
const dir = process.env.BARE_DIR; let n = 0
http.createServer((req, res) => {
  const out = fs.createWriteStream(path.join(dir, 'body-' + (n++ % 64)))
  req.pipe(out).on('finish', () => { res.setHeader('content-type', 'application/json'); res.end('{"resCode":1}') })
}).listen(0, '127.0.0.1', function () { console.log(JSON.stringify({ listening: true, port: this.address().port })) })`

async function uploadAll(port, route, file, headers, fieldsFor) {
  const totalChunks = Math.ceil(file.length / CHUNK_BYTES)
  const started = process.hrtime.bigint()
  let uploadId
  for (let index = 0; index < totalChunks; index++) {
    const data = file.subarray(index * CHUNK_BYTES, (index + 1) * CHUNK_BYTES)
    const { body, contentType } = multipartChunk(fieldsFor(index, totalChunks, data.length, uploadId), data)
    const response = await post(port, route, body, { 'content-type': contentType, ...headers })
    const parsed = JSON.parse(response.text)
    if (parsed.resCode !== 1) throw new Error(`chunk ${index} failed: ${response.text}`)
    uploadId = parsed.resData?.uploadId ?? uploadId
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return { seconds, mbPerSecond: file.length / MB / seconds, uploadId }
}

async function main() {
  const work = mkdtempSync(path.join(tmpdir(), 'upload-bench-'))
  const bareDir = path.join(work, 'bare')
  mkdirSync(bareDir)
  const password = 'bench-Passw0rd'
  const runtime = startProcess([...runtimeNodeArgs(), path.join(root, 'dist/runtime/server.mjs')], {
    PORT: '0', HOST: '127.0.0.1', WS_PORT: '0', DATA_DIR: path.join(work, 'device'), LOG_LEVEL: 'info',
    INITIAL_ADMIN_PASSWORD: password, INITIAL_PASSWORD_CHANGE_REQUIRED: 'false', UPLOAD_RESERVE_BYTES: String(256 * MB),
  })
  const bare = startProcess(['-e', BARE_SERVER], { BARE_DIR: bareDir })
  try {
    const [runtimePort, barePort] = await Promise.all([runtime.port, bare.port])
    const login = await postJson(runtimePort, '/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5(password) })
    const mtk = login.resData.mtk
    const file = randomBytes(FILE_BYTES)
    const fields = (run) => (index, totalChunks, chunkSize, uploadId) => ({
      purpose: 'model', chunkIndex: index, totalChunks, totalSize: file.length, chunkSize, clientRequestId: `bench-${run}`,
      ...(uploadId ? { uploadId } : {}),
    })

    // Warm-up (JIT, page cache, connection) on both sides, not counted.
    const warm = randomBytes(64 * MB)
    await uploadAll(barePort, '/upload', warm, {}, (i, n, size) => ({ purpose: 'model', chunkIndex: i, totalChunks: n, totalSize: warm.length, chunkSize: size }))
    const warmRun = await uploadAll(runtimePort, '/gtw/cwai/atomic/model/uploadTemp', warm, { mtk }, (i, n, size, id) => ({ purpose: 'model', chunkIndex: i, totalChunks: n, totalSize: warm.length, chunkSize: size, clientRequestId: 'warm', ...(id ? { uploadId: id } : {}) }))
    await postJson(runtimePort, '/gtw/cwai/atomic/model/cancelUpload', { uploadId: warmRun.uploadId }, mtk)

    const baseline = []
    const measured = []
    // RSS growth of the runtime from before the first measured upload to its peak over all rounds.
    const sampler = rssSampler(runtime.child.pid)
    for (let round = 0; round < ROUNDS; round++) {
      baseline.push(await uploadAll(barePort, '/upload', file, {}, fields(`bare-${round}`)))
      const result = await uploadAll(runtimePort, '/gtw/cwai/atomic/model/uploadTemp', file, { mtk }, fields(round))
      measured.push(result)
      const cancel = await postJson(runtimePort, '/gtw/cwai/atomic/model/cancelUpload', { uploadId: result.uploadId }, mtk)
      if (cancel.resCode !== 1) throw new Error(`cancel failed: ${JSON.stringify(cancel)}`)
    }
    const rss = sampler.stop()
    const best = (runs) => Math.max(...runs.map((r) => r.mbPerSecond))
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
    // Each runtime round against the baseline round just before it (same machine load, roughly).
    const pairedRatios = measured.map((r, i) => r.mbPerSecond / baseline[i].mbPerSecond)
    const settings = {
      fileBytes: FILE_BYTES, chunkBytes: CHUNK_BYTES, rounds: ROUNDS, sha256Sent: false,
      how: 'rounds alternate bare/runtime over loopback, one keep-alive connection, chunks sent one after another; best round of each side counts',
      baselineRoundsMbPerSecond: baseline.map((r) => r.mbPerSecond),
      runtimeRoundsMbPerSecond: measured.map((r) => r.mbPerSecond),
      pairedRatios, pairedRatioMedian: median(pairedRatios),
      rssStartBytes: rss.startBytes, rssMaxBytes: rss.maxBytes,
      loadAverage: loadavg(),
    }
    const reportPath = await writeReport({
      benchmark: 'upload',
      description: 'uploadTemp on the real runtime (mtk, multipart, tus FileStore, libsql manifest): 256 MB in 8 MB chunks vs a bare node:http server streaming the same bodies to disk',
      settings,
      figures: [
        figure({ name: 'throughput', unit: 'MB/s', value: best(measured), baseline: { name: 'bare node:http server piping each body to a file', value: best(baseline) }, target: { ratioAtLeast: 0.8 } }),
        figure({ name: 'runtime RSS growth during the uploads', unit: 'MB', value: rss.growthBytes / MB, baseline: { name: 'RSS growth limit', value: 64 }, target: { ratioAtMost: 1 } }),
      ],
    })
    console.log(readFileSync(reportPath, 'utf8'))
  } finally {
    runtime.child.kill('SIGTERM')
    bare.child.kill('SIGTERM')
    agent.destroy()
    await new Promise((resolve) => setTimeout(resolve, 500))
    rmSync(work, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
