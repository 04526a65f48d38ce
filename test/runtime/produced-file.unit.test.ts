import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { producedFileResponse, removeLeftoverProducedFiles } from '../../shared/http/produced-file.ts'

let dir: string
beforeEach(() => { dir = mkdtempSync(path.join(tmpdir(), 'produced-')) })
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
const serve = (range?: string) => producedFileResponse(
  new Request('http://device/export', { method: 'POST', headers: range ? { range } : {} }),
  dir, () => Readable.from([bytes]), { downloadName: 'pkg.zip', contentType: 'application/zip' },
)

describe('exports produced into a scratch file and served ranged', () => {
  it('serves a middle range and removes the scratch file once the body is read', async () => {
    const response = await serve('bytes=16-31')
    expect(response.status).toBe(206)
    expect(response.headers.get('content-range')).toBe('bytes 16-31/256')
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes.subarray(16, 32))).toBe(true)
    for (let i = 0; i < 20 && readdirSync(dir).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(readdirSync(dir)).toEqual([])
  })

  it('answers 416 for an unsatisfiable range and removes the scratch file at once', async () => {
    const response = await serve('bytes=256-')
    expect(response.status).toBe(416)
    expect(response.headers.get('content-range')).toBe('bytes */256')
    expect(readdirSync(dir)).toEqual([])
  })

  it('removes the scratch file when the client abandons the download', async () => {
    const response = await serve()
    expect(readdirSync(dir)).toHaveLength(1)
    await response.body!.cancel()
    for (let i = 0; i < 20 && readdirSync(dir).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(readdirSync(dir)).toEqual([])
  })

  it('at start-up removes produced files left behind, and nothing else', async () => {
    writeFileSync(path.join(dir, 'export-0b1c.zip'), 'x')
    writeFileSync(path.join(dir, 'upload-part'), 'y')
    mkdirSync(path.join(dir, 'algorithm-export-1'))
    expect(await removeLeftoverProducedFiles(dir)).toBe(1)
    expect(readdirSync(dir).sort()).toEqual(['algorithm-export-1', 'upload-part'])
    expect(await removeLeftoverProducedFiles(path.join(dir, 'missing'))).toBe(0)
  })
})
