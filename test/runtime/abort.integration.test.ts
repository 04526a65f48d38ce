import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { deadline } from '../../runtime/abort.ts'

const root = path.resolve(import.meta.dirname, '../..')
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('deadline: a source signal or a timeout, whichever comes first', () => {
  it('aborts with the source reason when a source aborts', () => {
    const source = new AbortController()
    const { signal } = deadline(10_000, source.signal)
    source.abort('client gone')
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe('client gone')
  })

  it('starts aborted when a source already is', () => {
    const { signal } = deadline(10_000, AbortSignal.abort('early'))
    expect(signal.reason).toBe('early')
  })

  it('aborts with a TimeoutError once the timeout passes', async () => {
    const { signal } = deadline(30, undefined)
    await sleep(80)
    expect(signal.aborted).toBe(true)
    expect((signal.reason as Error).name).toBe('TimeoutError')
  })

  it('never aborts after dispose', async () => {
    const source = new AbortController()
    const { signal, dispose } = deadline(30, source.signal)
    dispose()
    await sleep(80)
    source.abort()
    expect(signal.aborted).toBe(false)
  })

  it('still fires when garbage collection runs meanwhile (AbortSignal.any + AbortSignal.timeout does not on Node 20)', () => {
    // A process of its own with --expose-gc, collecting every 20 ms while the 300 ms deadline runs.
    const script = `
      import { deadline } from ${JSON.stringify(path.join(root, 'runtime/abort.ts'))}
      const gc = setInterval(() => globalThis.gc(), 20)
      const { signal } = deadline(300, new AbortController().signal)
      const started = Date.now()
      const give = setTimeout(() => { console.log('hung'); process.exit(1) }, 3000)
      signal.addEventListener('abort', () => { clearInterval(gc); clearTimeout(give); console.log(signal.reason.name, Date.now() - started >= 290) })
    `
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })
    expect(out.trim()).toBe('TimeoutError true')
  })
})
