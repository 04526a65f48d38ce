/**
 * Face import (spec 4.10 File import, 4.12) over HTTP on the real runtime: an archive of face
 * images with a CSV or JSON manifest, uploaded with purpose face-import, becomes a job whose
 * status gives counts and per-row errors; running it again changes nothing; hostile archives
 * are refused and nothing lands outside the job's folder.
 */
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { tarGz } from '../helpers/tarball.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { zipOf } from '../helpers/zip.ts'
import { cropFace, samplePhoto, type SamplePhoto } from './faces.ts'

/** Expanded-size bound of the device under test: the good archives stay far below it. */
const MAX_EXPANDED = 4 * 1024 * 1024

test.override('deviceOptions', { env: { FACE_IMPORT_MAX_EXPANDED_BYTES: String(MAX_EXPANDED) } })

test.describe('face import over HTTP', () => {
  let device: DeviceProcess
  let mtk: string
  let photo: SamplePhoto
  const galleryId = 'imported'
  const ok = async (route: string, body: unknown) => {
    const answer = (await device.post(route, body, mtk)).body
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }
  /** Uploads the archive, starts the import and waits for the job to end. */
  const importArchive = async (archive: Buffer, filename: string) => {
    const uploadId = await uploadFile(device, mtk, archive, filename, 'face-import')
    const { jobId } = await ok('/gtw/cwai/File/ImportFiles', { galleryId, uploadId })
    for (let i = 0; i < 600; i++) {
      const job = await ok('/gtw/cwai/File/ImportStatus', { jobId })
      if (job.state !== 'running') return job
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error('import did not finish')
  }
  let good: Buffer

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    photo = await samplePhoto(device, mtk, 1)
    await ok('/gtw/cwai/Library/AddLibrary', { galleryId, name: 'Imported' })
    const blank = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#808080' } }).jpeg().toBuffer()
    const group = await sharp(photo.bytes).resize({ width: 1000 }).jpeg().toBuffer()
    const manifest = [
      'personId,name,file,team',
      'p0,Ann,faces/a.jpg,red',
      'p1,"Doe, Jane",faces/b.jpg,"blue ""B"""',
      'p0,Ann again,faces/c.jpg,red',
      'p3,Nobody,faces/missing.jpg,',
      'p4,Blank,faces/blank.jpg,',
      'p5,Crowd,faces/group.jpg,',
      'p2,Cy,faces/c.jpg,green',
      'bad id,Bad,faces/a.jpg,',
    ].join('\r\n')
    good = await zipOf({ 'manifest.csv': manifest, 'faces/a.jpg': await cropFace(photo, 0), 'faces/b.jpg': await cropFace(photo, 1), 'faces/c.jpg': await cropFace(photo, 2), 'faces/blank.jpg': blank, 'faces/group.jpg': group })
  })

  test('imports the good rows and names every bad one with its reason', async () => {
    const job = await importArchive(good, 'persons.zip')
    expect(job).toMatchObject({ galleryId, state: 'done', total: 8, processed: 8, imported: 3, skipped: 0, failed: 5, error: null })
    expect(job.errors).toEqual([
      { row: 3, personId: 'p0', file: 'faces/c.jpg', reason: 'duplicate-id' },
      { row: 4, personId: 'p3', file: 'faces/missing.jpg', reason: 'missing-file' },
      { row: 5, personId: 'p4', file: 'faces/blank.jpg', reason: 'no-face', faces: 0 },
      { row: 6, personId: 'p5', file: 'faces/group.jpg', reason: 'several-faces', faces: 3 },
      { row: 8, personId: 'bad id', file: 'faces/a.jpg', reason: 'invalid-row', detail: expect.stringContaining('personId') },
    ])
    const persons = await ok('/gtw/cwai/Library/PersonPage', { galleryId })
    expect(persons.rows.map((p: any) => [p.personId, p.name, p.attributes, p.faceIds.length])).toEqual([
      ['p0', 'Ann', { team: 'red' }, 1], ['p1', 'Doe, Jane', { team: 'blue "B"' }, 1], ['p2', 'Cy', { team: 'green' }, 1],
    ])
    // The imported persons are found again in the whole photo.
    const { faces } = await ok('/gtw/cwai/Library/SearchByImage', { galleryId, imageBase64: photo.bytes.toString('base64'), topK: 1 })
    expect(faces.map((f: any) => f.matches[0].personId).sort()).toEqual(['p0', 'p1', 'p2'])
    expect(readdirSync(path.join(device.dataDir, 'imports'))).toEqual([])
  })

  test('the same archive again changes nothing; a tar.gz with a JSON manifest adds to it', async () => {
    const again = await importArchive(good, 'persons.zip')
    expect(again).toMatchObject({ state: 'done', total: 8, imported: 0, skipped: 3, failed: 5 })
    const gallery = (await ok('/gtw/cwai/Library/LibraryPage', {})).rows.find((g: any) => g.galleryId === galleryId)
    expect([gallery.persons, gallery.faces]).toEqual([3, 3])
    const json = JSON.stringify([{ personId: 'p0', name: 'Ann B.', file: 'more/a2.jpg', attributes: { note: 'second image' } }])
    const more = tarGz([{ path: 'manifest.json', data: json }, { path: 'more/', type: 'Directory' }, { path: 'more/a2.jpg', data: await sharp(await cropFace(photo, 0)).flop().jpeg().toBuffer() }])
    expect(await importArchive(more, 'more.tar.gz')).toMatchObject({ state: 'done', total: 1, imported: 1, failed: 0, errors: [] })
    const ann = await ok('/gtw/cwai/Library/PersonDetail', { galleryId, personId: 'p0' })
    expect([ann.name, ann.attributes, ann.faceIds.length]).toEqual(['Ann B.', { note: 'second image' }, 2])
  })

  test('refuses hostile and broken archives as a failed job, writing nothing outside its folder', async () => {
    const manifest = 'personId,name,file\np9,Evil,evil.jpg\n'
    const face = await cropFace(photo, 0)
    const cases: [string, Buffer, string, string][] = [
      ['climbing.tar.gz', tarGz([{ path: 'manifest.csv', data: manifest }, { path: '../../evil.jpg', data: face }]), 'api.error.FaceImportArchiveUnsafe', 'absolute or climbing path'],
      ['absolute.tar.gz', tarGz([{ path: '/tmp/evil.jpg', data: face }]), 'api.error.FaceImportArchiveUnsafe', 'absolute or climbing path'],
      ['link.tar.gz', tarGz([{ path: 'manifest.csv', data: manifest }, { path: 'evil.jpg', type: 'SymbolicLink', linkpath: '/etc/passwd' }]), 'api.error.FaceImportArchiveUnsafe', ''],
      ['bomb.zip', await zipOf({ 'manifest.csv': manifest, 'zeros.jpg': Buffer.alloc(MAX_EXPANDED + 1) }), 'api.error.FaceImportArchiveTooLarge', ''],
      ['plain.zip', Buffer.from('not an archive at all'), 'api.error.FaceImportArchiveInvalid', ''],
      ['nomanifest.zip', await zipOf({ 'a.jpg': face }), 'api.error.FaceImportManifestInvalid', ''],
    ]
    for (const [name, archive, messageKey, reason] of cases) {
      const job = await importArchive(archive, name)
      expect(job.state, name).toBe('failed')
      expect(job.error.messageKey, name).toBe(messageKey)
      if (reason) expect(job.error.details.reason, name).toBe(reason)
      expect(job.imported, name).toBe(0)
    }
    expect(existsSync(path.join(device.dataDir, 'evil.jpg'))).toBe(false)
    expect(readdirSync(path.join(device.dataDir, 'imports'))).toEqual([])
    expect((await ok('/gtw/cwai/Library/PersonPage', { galleryId })).rows.map((p: any) => p.personId)).toEqual(['p0', 'p1', 'p2'])
  })

  test('takes only face-import uploads, into an existing gallery', async () => {
    const image = await uploadFile(device, mtk, good, 'persons.zip', 'image')
    const wrong = (await device.post('/gtw/cwai/File/ImportFiles', { galleryId, uploadId: image }, mtk)).body
    expect(wrong.resMsg[0].messageKey).toBe('api.error.uploadPurposeMismatch')
    const upload = await uploadFile(device, mtk, good, 'persons.zip', 'face-import')
    const missing = (await device.post('/gtw/cwai/File/ImportFiles', { galleryId: 'nope', uploadId: upload }, mtk)).body
    expect(missing.resMsg[0].messageKey).toBe('api.error.GalleryNotFound')
    expect((await device.post('/gtw/cwai/File/ImportStatus', { jobId: 'nope' }, mtk)).body.resMsg[0].messageKey).toBe('api.error.FaceImportNotFound')
  })
})
