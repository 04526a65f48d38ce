#!/usr/bin/env node
// The static checks `npm test` runs before the tests: the type check (`tsc --noEmit -p .`) and
// the linter with its layer rules (`eslint .`), side by side (each keeps one core busy for
// about 20 s), each one's output printed whole once it ends. Exits non-zero if either fails.
import { spawn } from 'node:child_process'
import { setPriority } from 'node:os'
import path from 'node:path'

// They run beside the real-time e2e files (vitest.config.ts): at the background files' priority.
setPriority(10)

const bin = (name) => path.join(import.meta.dirname, '..', 'node_modules', '.bin', name)
const checks = [
  { name: 'tsc', command: bin('tsc'), args: ['--noEmit', '-p', '.'] },
  { name: 'eslint', command: bin('eslint'), args: ['.'] },
]

const run = ({ name, command, args }) => new Promise((resolve) => {
  const started = Date.now()
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  child.once('error', (error) => resolve({ name, code: 1, output: String(error), seconds: 0 }))
  child.once('close', (code) => resolve({ name, code: code ?? 1, output, seconds: (Date.now() - started) / 1000 }))
})

const results = await Promise.all(checks.map(run))
for (const { name, code, output, seconds } of results) {
  process.stdout.write(output)
  console.log(`${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${seconds.toFixed(1)} s`)
}
process.exit(results.every((r) => r.code === 0) ? 0 : 1)
