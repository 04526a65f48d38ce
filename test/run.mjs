#!/usr/bin/env node
// `npm test`: the static checks (test/checks.mjs: tsc and eslint) and the whole vitest suite side
// by side — the checks take about 70 s of CPU, which the suite's first minutes, spent waiting on
// real-time footage, leave free (docs/developing.md "Tests"). The suite's output streams as it
// comes; the checks' output is printed once they end, and their verdict again at the end.
// Exits non-zero if either fails. Arguments go to vitest.
import { spawn } from 'node:child_process'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const finished = (child) => new Promise((resolve) => {
  child.once('error', (error) => { console.error(String(error)); resolve(1) })
  child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
})

const checks = spawn(process.execPath, [path.join(root, 'test/checks.mjs')], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
let checksOutput = ''
checks.stdout.on('data', (chunk) => { checksOutput += chunk })
checks.stderr.on('data', (chunk) => { checksOutput += chunk })
const checksDone = finished(checks).then((code) => {
  process.stdout.write(`\n── static checks (tsc, eslint) ──\n${checksOutput}`)
  return code
})

const vitest = spawn(path.join(root, 'node_modules/.bin/vitest'), ['run', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' })
const [checksCode, vitestCode] = await Promise.all([checksDone, finished(vitest)])
console.log(`static checks: ${checksCode === 0 ? 'passed' : `FAILED (exit ${checksCode}; their output is above)`}; tests: ${vitestCode === 0 ? 'passed' : `FAILED (exit ${vitestCode})`}`)
process.exit(checksCode !== 0 ? checksCode : vitestCode)
