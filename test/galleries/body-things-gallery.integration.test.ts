/**
 * Body and things galleries over HTTP on the real runtime (spec 4.10 Body gallery, Things
 * gallery, 2.4, 2.6): items registered from person crops and picture tiles of the sample
 * photos, found again in changed copies by search by image and by PTaskDetectPic with the
 * body-recognition and things-recognition pipelines; the three kinds keep apart; images
 * without exactly one person are refused with the count.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import sharp from 'sharp'
import { expect } from 'vitest'
import type { Target } from '../../shared/inference/types.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { samplePath } from '../inference/helpers.ts'
import { targetsOf, type Box } from './faces.ts'

const iou = (a: Box, b: Box) => {
  const w = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)), h = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y))
  return (w * h) / (a.width * a.height + b.width * b.height - w * h)
}

test.describe('body and things galleries over HTTP', () => {
  let device: DeviceProcess
  let mtk: string
  const post = async (route: string, body: unknown) => (await device.post(route, body, mtk)).body
  const ok = async (route: string, body: unknown) => {
    const answer = await post(route, body)
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }
  const fail = async (route: string, body: unknown) => {
    const answer = await post(route, body)
    expect(answer.resCode, `${route} should fail`).toBe(0)
    return answer.resMsg[0]
  }
  const base64 = (b: Buffer) => b.toString('base64')
  const detect = async (algorithmCode: string, image: Buffer, taskConfig?: unknown) => {
    const taskId = randomUUID()
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode, algorithmUpdateTime: String(Date.now()), ...(taskConfig ? { taskConfig } : {}) })
    return targetsOf(await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode, imageBase64: base64(image) }))
  }
  const photo = readFileSync(samplePath(1))
  const photoSize = { width: 1920, height: 1280 }
  /** sample1's three people as body-recognition boxes them, left to right. */
  let persons: Box[] = []
  const bodies = `bodies-${randomUUID().slice(0, 8)}`
  const things = `things-${randomUUID().slice(0, 8)}`
  /** A quarter of sample2 (2 × 2 tiles): the things registered. */
  const tile = async (i: number) => {
    const left = (i % 2) * 960, top = Math.floor(i / 2) * 640
    return sharp(readFileSync(samplePath(2))).extract({ left, top, width: 960, height: 640 }).jpeg({ quality: 92 }).toBuffer()
  }

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    expect((await sharp(photo).metadata()).width).toBe(photoSize.width)
    // With no body gallery the persons are found and unknown (1: the galleries are empty).
    const found = await detect('body-recognition', photo)
    expect(found.map((t) => t.confidence.map((c) => c.label))).toEqual([['person', 'unknown'], ['person', 'unknown'], ['person', 'unknown']])
    persons = found.map((t) => t.box).sort((a, b) => a.x - b.x)
    await ok('/gtw/cwai/BodyLibrary/AddLibrary', { galleryId: bodies, name: 'Visitors' })
    for (const [i, box] of persons.entries()) {
      // The person with 5 % of their box around them: exactly one person in the picture.
      const left = Math.max(0, Math.round(box.x - box.width * 0.05)), top = Math.max(0, Math.round(box.y - box.height * 0.05))
      const crop = await sharp(photo).extract({ left, top, width: Math.min(photoSize.width - left, Math.round(box.width * 1.1)), height: Math.min(photoSize.height - top, Math.round(box.height * 1.1)) }).jpeg().toBuffer()
      await ok('/gtw/cwai/BodyLibrary/AddItem', { galleryId: bodies, itemId: `b${i}`, name: `Body ${i}`, attributes: { coat: i } })
      const image = i === 0 ? { uploadId: await uploadFile(device, mtk, crop, 'person.jpg', 'image') } : { imageBase64: base64(crop) }
      const added = await ok('/gtw/cwai/BodyLibrary/AddItemImage', { galleryId: bodies, itemId: `b${i}`, ...image })
      expect(added.imageId).toBeGreaterThan(0)
      expect(Object.keys(added).sort()).toEqual(['box', 'imageId'])
    }
    await ok('/gtw/cwai/ThingsLibrary/AddLibrary', { galleryId: things, name: 'Objects', description: 'tiles of a photo' })
    for (let i = 0; i < 4; i++) {
      await ok('/gtw/cwai/ThingsLibrary/AddItem', { galleryId: things, itemId: `t${i}`, name: `Tile ${i}` })
      await ok('/gtw/cwai/ThingsLibrary/AddItemImage', { galleryId: things, itemId: `t${i}`, imageBase64: base64(await tile(i)) })
    }
  })

  test('lists body galleries and items with their counts, image ids and pictures (the person cut out)', async () => {
    const page = await ok('/gtw/cwai/BodyLibrary/LibraryPage', {})
    expect(page.total).toBe(1)
    expect(page.rows[0]).toMatchObject({ galleryId: bodies, name: 'Visitors', description: '', items: 3, images: 3 })
    const items = await ok('/gtw/cwai/BodyLibrary/ItemPage', { galleryId: bodies, name: 'Body' })
    expect(items.rows.map((r: any) => [r.itemId, r.name, r.imageIds.length])).toEqual([['b0', 'Body 0', 1], ['b1', 'Body 1', 1], ['b2', 'Body 2', 1]])
    expect(items.rows[2].attributes).toEqual({ coat: 2 })
    const picture = await fetch(`${device.url}/gtw/cwai/BodyLibrary/ItemPicture?imageId=${items.rows[0].imageIds[0]}`, { headers: { mtk } })
    expect([picture.status, picture.headers.get('content-type')]).toEqual([200, 'image/jpeg'])
    const meta = await sharp(Buffer.from(await picture.arrayBuffer())).metadata()
    // A standing person: 160 high, narrower than that, about in the proportions of the box
    // (the one the detector finds again in the registered crop).
    expect(meta.height).toBe(160)
    expect(Math.abs(meta.width! / ((160 * persons[0]!.width) / persons[0]!.height) - 1)).toBeLessThan(0.15)
    // The face gallery is another kind: it holds none of these.
    expect((await ok('/gtw/cwai/Library/LibraryPage', {})).total).toBe(0)
  })

  test('search by image: each person of the mirrored group photo finds their item first', async () => {
    const mirrored = await sharp(photo).flop().jpeg().toBuffer()
    const { regions } = await ok('/gtw/cwai/BodyLibrary/SearchByImage', { imageBase64: base64(mirrored), topK: 3 })
    expect(regions).toHaveLength(3)
    for (const [i, box] of persons.entries()) {
      const region = regions.find((r: any) => iou(r.box, { ...box, x: photoSize.width - box.x - box.width }) > 0.7)
      expect(region, `person ${i}`).toBeDefined()
      expect(region.landmark).toEqual([])
      expect(region.matches.map((m: any) => m.itemId)).toHaveLength(3)
      expect(region.matches[0]).toMatchObject({ galleryId: bodies, itemId: `b${i}`, name: `Body ${i}` })
      expect(region.matches[1].similarity).toBeLessThan(region.matches[0].similarity)
    }
  })

  test('refuses a body image without exactly one person, naming the count; nothing is stored', async () => {
    await ok('/gtw/cwai/BodyLibrary/AddItem', { galleryId: bodies, itemId: 'nobody', name: 'Nobody' })
    const blank = await sharp({ create: { width: 320, height: 480, channels: 3, background: '#808080' } }).jpeg().toBuffer()
    const none = await fail('/gtw/cwai/BodyLibrary/AddItemImage', { galleryId: bodies, itemId: 'nobody', imageBase64: base64(blank) })
    expect([none.messageKey, none.msgCode, none.details.persons]).toEqual(['api.error.GalleryBodyCount', '7516', 0])
    const several = await fail('/gtw/cwai/BodyLibrary/AddItemImage', { galleryId: bodies, itemId: 'nobody', imageBase64: base64(photo) })
    expect([several.messageKey, several.details.persons, several.details.boxes.length]).toEqual(['api.error.GalleryBodyCount', 3, 3])
    expect(several.msgText).toContain('3 found')
    expect((await ok('/gtw/cwai/BodyLibrary/ItemDetail', { galleryId: bodies, itemId: 'nobody' })).imageIds).toEqual([])
    await ok('/gtw/cwai/BodyLibrary/DeleteItem', { galleryId: bodies, itemId: 'nobody' })
  })

  test('PTaskDetectPic with body-recognition names the registered persons of the task\'s galleries; a deleted item becomes unknown', async () => {
    const jpeg30 = await sharp(photo).jpeg({ quality: 30 }).toBuffer()
    const named = async () => (await detect('body-recognition', jpeg30, { recognition: { galleryIds: [bodies] } }))
      .sort((a, b) => a.box.x - b.box.x).map((t: Target) => t.confidence[1]!.label)
    expect(await named()).toEqual(['Body 0', 'Body 1', 'Body 2'])
    await ok('/gtw/cwai/BodyLibrary/DeleteItem', { galleryId: bodies, itemId: 'b1' })
    expect(await named()).toEqual(['Body 0', 'unknown', 'Body 2'])
  })

  test('things: the whole picture is the item; a changed copy finds it by search and by PTaskDetectPic', async () => {
    const copy = await sharp(await tile(2)).flop().jpeg({ quality: 30 }).toBuffer()
    const { regions } = await ok('/gtw/cwai/ThingsLibrary/SearchByImage', { galleryId: things, imageBase64: base64(copy), topK: 4 })
    expect(regions).toHaveLength(1)
    expect(regions[0].box).toEqual({ x: 0, y: 0, width: 960, height: 640 })
    expect(regions[0].matches.map((m: any) => m.itemId)[0]).toBe('t2')
    expect(regions[0].matches).toHaveLength(4)
    const threshold = (regions[0].matches[0].similarity + regions[0].matches[1].similarity) / 2
    const strict = await ok('/gtw/cwai/ThingsLibrary/SearchByImage', { galleryId: things, imageBase64: base64(copy), topK: 4, threshold })
    expect(strict.regions[0].matches.map((m: any) => m.itemId)).toEqual(['t2'])
    const [target] = await detect('things-recognition', copy, { recognition: { galleryIds: [things] } })
    expect(target!.box).toEqual({ x: 0, y: 0, width: 960, height: 640 })
    expect(target!.confidence[0]!.label).toBe('Tile 2')
    const picture = await fetch(`${device.url}/gtw/cwai/ThingsLibrary/ItemPicture?imageId=${(await ok('/gtw/cwai/ThingsLibrary/ItemDetail', { galleryId: things, itemId: 't2' })).imageIds[0]}`, { headers: { mtk } })
    const meta = await sharp(Buffer.from(await picture.arrayBuffer())).metadata()
    expect([meta.width, meta.height]).toEqual([160, 107])
  })

  test('keeps the kinds apart and answers bad requests with catalogue errors', async () => {
    // A body gallery is no things gallery (and the other way round).
    expect(await fail('/gtw/cwai/ThingsLibrary/AddItem', { galleryId: bodies, itemId: 'x', name: 'x' })).toMatchObject({ messageKey: 'api.error.GalleryNotFound', details: { galleryId: bodies } })
    expect(await fail('/gtw/cwai/BodyLibrary/ItemPage', { galleryId: things })).toMatchObject({ messageKey: 'api.error.GalleryNotFound' })
    expect(await fail('/gtw/cwai/ThingsLibrary/AddLibrary', { galleryId: things, name: 'again' })).toMatchObject({ messageKey: 'api.error.GalleryExists' })
    expect(await fail('/gtw/cwai/ThingsLibrary/AddItem', { galleryId: things, itemId: 't0', name: 'again' })).toMatchObject({ messageKey: 'api.error.GalleryItemExists', msgCode: '7514', details: { galleryId: things, itemId: 't0' } })
    expect(await fail('/gtw/cwai/ThingsLibrary/UpdateItem', { galleryId: things, itemId: 'nope', name: 'x' })).toMatchObject({ messageKey: 'api.error.GalleryItemNotFound', msgCode: '7513', details: { itemId: 'nope' } })
    expect(await fail('/gtw/cwai/ThingsLibrary/DeleteItemImage', { galleryId: things, itemId: 't0', imageId: 999_999 })).toMatchObject({ messageKey: 'api.error.GalleryImageNotFound', msgCode: '7515', details: { itemId: 't0', imageId: 999_999 } })
    // The face gallery's field names are not this kind's.
    expect(await fail('/gtw/cwai/BodyLibrary/AddItem', { galleryId: bodies, personId: 'p', name: 'p' })).toMatchObject({ messageKey: 'api.error.InvalidParam' })
    expect(await fail('/gtw/cwai/ThingsLibrary/AddItem', { galleryId: things, itemId: '../x', name: 'x' })).toMatchObject({ messageKey: 'api.error.InvalidParam' })
    expect(await fail('/gtw/cwai/ThingsLibrary/SearchByImage', { galleryId: things })).toMatchObject({ messageKey: 'api.error.InvalidParam' })
    const zero = await (await fetch(`${device.url}/gtw/cwai/ThingsLibrary/ItemPicture?imageId=0`, { headers: { mtk } })).json()
    expect(zero.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam' })
    // Renamed, then deleted with its items: the things gallery is gone, the body gallery stays.
    expect(await ok('/gtw/cwai/ThingsLibrary/UpdateLibrary', { galleryId: things, name: 'Renamed' })).toMatchObject({ name: 'Renamed', description: 'tiles of a photo', items: 4, images: 4 })
    await ok('/gtw/cwai/ThingsLibrary/DeleteLibrary', { galleryId: things })
    expect((await ok('/gtw/cwai/ThingsLibrary/LibraryPage', {})).total).toBe(0)
    expect((await ok('/gtw/cwai/BodyLibrary/LibraryPage', {})).total).toBe(1)
  })
})
