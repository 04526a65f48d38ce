import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { validCaseFile } from './case-file-fixture.ts'

// `npm run case:validate <file>` as a person runs it: exit codes and printed violations.
const run = promisify(execFile)
const repo = path.resolve(import.meta.dirname, '../..')
let dir: string

async function validateCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'case:validate', '--', ...args], { cwd: repo })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

beforeAll(async () => { dir = await mkdtemp(path.join(tmpdir(), 'case-validate-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

describe('npm run case:validate', () => {
  it('exits 0 and says OK for a valid file', async () => {
    const file = path.join(dir, 'valid.json')
    await writeFile(file, JSON.stringify(validCaseFile(), null, 2))
    const r = await validateCli(file)
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`OK ${file}`)
  })

  it('exits 1 and prints every violation with its JSON pointer', async () => {
    const f = validCaseFile() as Record<string, any>
    f.schemaVersion = 2
    f.cases[0].steps[0].tasks[0].unknown = true
    f.cases[1].lastPassingChannels = 1
    const file = path.join(dir, 'invalid.json')
    await writeFile(file, JSON.stringify(f))
    const r = await validateCli(file)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('3 violation(s)')
    expect(r.stderr).toContain('/schemaVersion [enum] must be equal to one of the allowed values')
    expect(r.stderr).toContain('/cases/0/steps/0/tasks/0/unknown [additionalProperties]')
    expect(r.stderr).toContain('/cases/1/lastPassingChannels [last-passing-channels]')
  })

  it('exits 2 for a file that is not JSON, a missing file, or no file argument', async () => {
    const file = path.join(dir, 'broken.json')
    await writeFile(file, '{"schemaVersion": 3,')
    const r = await validateCli(file)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('cannot read as JSON')
    expect((await validateCli(path.join(dir, 'missing.json'))).code).toBe(2)
    const usage = await validateCli()
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('usage: npm run case:validate')
  })
})
