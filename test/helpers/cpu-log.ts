import { appendFileSync } from 'node:fs'
import { beforeAll, expect } from 'vitest'

// TEST_CPU_LOG=<file>: each test file's worker writes its pid and file, so a sampler of /proc can
// charge every process a worker starts (devices, sidecars, ffmpeg, browsers) to its file.
const out = process.env.TEST_CPU_LOG
if (out) beforeAll(() => { appendFileSync(out, JSON.stringify({ pid: process.pid, file: expect.getState().testPath }) + '\n') })
