import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { FileStore } from '@tus/file-store'
import { Server, Upload } from '@tus/server'
import { expectPinned } from '../helpers/pinned.ts'

// runtime/uploads/session-store.ts subclasses @tus/file-store's FileStore and the upload service
// works on the store's files directly; runtime/uploads/tus.ts counts on how @tus/server drives the
// store. What they rely on, so that an upgrade that changes any of it fails here first.
// Upgrading means re-reading both packages against those files, then the versions below.
describe('tus internals the upload store relies on', () => {
  let dir: string
  beforeEach(() => { dir = mkdtempSync(path.join(tmpdir(), 'tus-internals-')) })
  afterEach(() => { rmSync(dir, { recursive: true, force: true }) })

  const upload = (id: string, size: number) => new Upload({ id, size, offset: 0, metadata: {}, creation_date: new Date().toISOString() })

  it('runs on the exact versions it was written against', () => {
    expectPinned('@tus/file-store', '2.1.1')
    expectPinned('@tus/server', '2.4.5')
  })

  it('FileStore: options, extensions without checksum, and checkOrCreateDirectory called by the constructor', () => {
    const checkOrCreateDirectory = vi.fn()
    // SessionFileStore replaces this method on its prototype, by name
    class Probe extends FileStore {}
    Object.defineProperty(Probe.prototype, 'checkOrCreateDirectory', { value: checkOrCreateDirectory })
    const store = new Probe({ directory: dir, expirationPeriodInMilliseconds: 0 })
    expect(checkOrCreateDirectory).toHaveBeenCalledTimes(1)
    expect(store.directory).toBe(dir)
    expect(store.getExpiration()).toBe(0)
    // SessionFileStore appends 'checksum' to this list: the store, not the server, implements it
    expect(store.extensions).toEqual(['creation', 'creation-with-upload', 'creation-defer-length', 'termination', 'expiration'])
  })

  it('FileStore: bytes at <directory>/<id>, written in place at the offset, record at <id>.json, offset = file size', async () => {
    const store = new FileStore({ directory: dir })
    expect(store.write.length).toBe(3)
    await store.create(upload('u1', 10))
    const bytes = path.join(dir, 'u1')
    expect(statSync(bytes).size).toBe(0)
    expect(JSON.parse(readFileSync(`${bytes}.json`, 'utf8'))).toMatchObject({ id: 'u1', size: 10 })
    expect(await store.write(Readable.from([Buffer.from('abcdef')]), 'u1', 0)).toBe(6)
    expect(await store.write(Readable.from([Buffer.from('XY')]), 'u1', 2)).toBe(4)
    expect(readFileSync(bytes, 'utf8')).toBe('abXYef')
    // the checksum extension truncates a mismatching PATCH away; the offset follows the file
    truncateSync(bytes, 3)
    expect((await store.getUpload('u1')).offset).toBe(3)
    await store.remove('u1')
    expect(existsSync(bytes)).toBe(false)
    expect(existsSync(`${bytes}.json`)).toBe(false)
  })

  it('@tus/server: PATCH calls store.write(stream, id, offset), leaves Upload-Checksum alone, and hands store errors to onResponseError as thrown', async () => {
    const writes: [boolean, string, number][] = []
    let failWith: unknown = null
    class Store extends FileStore {
      override async write(readable: Readable, id: string, offset: number): Promise<number> {
        writes.push([readable instanceof Readable, id, offset])
        if (failWith !== null) throw failWith
        return super.write(readable, id, offset)
      }
    }
    const seen: unknown[] = []
    const server = new Server({
      path: '/files',
      datastore: new Store({ directory: dir }),
      relativeLocation: true,
      namingFunction: () => 'u1',
      onResponseError: (_req, error) => {
        seen.push(error)
        return undefined
      },
    })
    const request = (method: string, url: string, headers: Record<string, string>, body?: string) =>
      server.handleWeb(new Request(`http://device${url}`, { method, headers: { 'Tus-Resumable': '1.0.0', ...headers }, body }))
    const created = await request('POST', '/files', { 'Upload-Length': '8' })
    expect(created.status).toBe(201)
    expect(created.headers.get('location')).toBe('/files/u1')
    const patch = (offset: number, body: string, headers: Record<string, string> = {}) =>
      request('PATCH', '/files/u1', { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset), ...headers }, body)
    // a checksum the server would refuse if it implemented the extension itself
    const written = await patch(0, 'abcd', { 'Upload-Checksum': 'sha1 AAAAAAAAAAAAAAAAAAAAAAAAAAA=' })
    expect(written.status).toBe(204)
    expect(written.headers.get('upload-offset')).toBe('4')
    expect(writes).toEqual([[true, 'u1', 0]])
    // a tus error object answers as it says; any error reaches onResponseError unwrapped
    failWith = { status_code: 460, body: 'Checksum Mismatch\n' }
    const mismatch = await patch(4, 'efgh')
    expect(mismatch.status).toBe(460)
    expect(await mismatch.text()).toBe('Checksum Mismatch\n')
    expect(seen).toHaveLength(1)
    expect(seen[0]).toBe(failWith)
    expect(writes).toEqual([[true, 'u1', 0], [true, 'u1', 4]])
  })
})
