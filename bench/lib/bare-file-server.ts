// A bare node:http server that streams one file (whole, or one `Range` given as start-end)
// with fs.createReadStream (1 MB reads, as the device): the baseline of the model-export benchmark. Prints {"port"}.
import { createReadStream, statSync } from 'node:fs'
import http from 'node:http'

const file = process.argv[2]!
const size = statSync(file).size
const server = http.createServer((req, res) => {
  const match = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
  const start = match ? Number(match[1]) : 0
  const end = match ? Number(match[2]) : size - 1
  res.writeHead(match ? 206 : 200, { 'content-type': 'application/octet-stream', 'content-length': end - start + 1 })
  createReadStream(file, { start, end, highWaterMark: 1024 * 1024 }).pipe(res)
})
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: (server.address() as { port: number }).port })))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
