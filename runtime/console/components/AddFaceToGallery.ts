import { html } from 'htm/preact'
import { useEffect, useMemo, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { GalleryClient, type Gallery, type GalleryItem } from '../../client/galleries.ts'
import type { TargetBox } from '../../../shared/inference/types.ts'
import { uploadBrowserFile } from '../upload.ts'
import { ErrorPanel, type Failure } from './ErrorPanel.ts'

/** The crop's margin each side, as a share of the face box (the device's face detector needs context around the face). */
const MARGIN = 0.5
const NEW = ''

/**
 * The face `box` (pixels of the original picture, spec 2.6) with its margin, cut from the
 * original picture in the browser (EXIF orientation applied, as the device decodes) as JPEG:
 * a gallery picture must show exactly one face, and the whole photo would show them all.
 */
export async function cropFace(picture: Blob, box: TargetBox, name: string): Promise<File> {
  const bitmap = await createImageBitmap(picture, { imageOrientation: 'from-image' })
  try {
    const left = Math.max(0, Math.floor(box.x - box.width * MARGIN)), top = Math.max(0, Math.floor(box.y - box.height * MARGIN))
    const right = Math.min(bitmap.width, Math.ceil(box.x + box.width * (1 + MARGIN))), bottom = Math.min(bitmap.height, Math.ceil(box.y + box.height * (1 + MARGIN)))
    if (right - left < 2 || bottom - top < 2) throw new Error('The face box lies outside the picture.')
    const canvas = document.createElement('canvas')
    canvas.width = right - left
    canvas.height = bottom - top
    canvas.getContext('2d')!.drawImage(bitmap, left, top, canvas.width, canvas.height, 0, 0, canvas.width, canvas.height)
    const jpeg = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.92))
    if (!jpeg) throw new Error('The browser could not encode the face as JPEG.')
    return new File([jpeg], name, { type: 'image/jpeg' })
  } finally {
    bitmap.close()
  }
}

/**
 * "Add to gallery" for one face of a detection or search result (docs/console-and-cli.md "Console"): pick a
 * face gallery and a person (or a new one); the face is cropped from the original picture,
 * uploaded (purpose `image`) and added to the person. The device's refusal is shown; a person
 * made for a refused face is removed again.
 */
export function AddFaceToGallery({ client, account, picture, box, title, galleryId: preferred, onAdded, onClose }: {
  client: DeviceClient; account: string; picture: File; box: TargetBox; title: string; galleryId?: string | null; onAdded?: () => void; onClose: () => void
}) {
  const faces = useMemo(() => new GalleryClient(client, 'face'), [client])
  const [galleries, setGalleries] = useState<Gallery[] | null>(null)
  const [galleryId, setGalleryId] = useState('')
  const [persons, setPersons] = useState<GalleryItem[] | null>(null)
  const [personId, setPersonId] = useState(NEW)
  const [newId, setNewId] = useState('')
  const [newName, setNewName] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Failure | null>(null)
  const [added, setAdded] = useState<string | null>(null)

  useEffect(() => {
    faces.galleries().then((page) => {
      setGalleries(page.rows)
      setGalleryId(page.rows.find((g) => g.galleryId === preferred)?.galleryId ?? page.rows[0]?.galleryId ?? '')
    }, (e) => setError({ error: e, context: 'Face galleries' }))
  }, [faces])
  const loadPersons = () => galleryId ? faces.items(galleryId).then((page) => setPersons(page.rows), (e) => setError({ error: e, context: 'Persons' })) : Promise.resolve()
  useEffect(() => { setPersons(null); setPersonId(NEW); loadPersons() }, [galleryId])

  const add = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    setAdded(null)
    let context = 'Crop'
    let made: string | null = null
    let uploadId: string | null = null
    try {
      const face = await cropFace(picture, box, `${title.toLowerCase().replace(/\W+/g, '-')}-${picture.name.replace(/\.\w+$/, '')}.jpg`)
      context = 'Upload'
      uploadId = await uploadBrowserFile(client, account, face, 'image')
      context = 'Add to gallery'
      if (personId === NEW) made = (await faces.addItem({ galleryId, itemId: newId.trim(), name: newName.trim() })).itemId
      const target = made ?? personId
      await faces.addImage(galleryId, target, uploadId)
      uploadId = null
      const person = made ? newName.trim() : persons?.find((p) => p.itemId === target)?.name ?? target
      setAdded(`${title} added to ${person} (${galleries?.find((g) => g.galleryId === galleryId)?.name ?? galleryId}).`)
      made = null
      setNewId('')
      setNewName('')
      await loadPersons()
      setPersonId(target)
      onAdded?.()
    } catch (e) {
      setError({ error: e, context })
    } finally {
      // A refused face: its upload is released (spec 4.7) and a person made for it removed.
      if (uploadId) client.cancelUpload(uploadId).catch(() => undefined)
      if (made) await faces.deleteItem(galleryId, made).catch(() => undefined)
      setBusy(false)
    }
  }

  return html`<form class="add-face stack" onSubmit=${add} aria-busy=${busy} aria-label=${`Add ${title} to a gallery`} data-testid="add-face">
    <p><strong>${title}</strong> to a face gallery (cut from the picture with a margin: it must show this face only)</p>
    ${galleries?.length === 0 ? html`<p class="hint">No face gallery yet: make one on the Galleries page first.</p>` : null}
    ${galleries?.length ? html`<div class="row">
      <label>Gallery <select value=${galleryId} onChange=${(e: Event) => setGalleryId((e.target as HTMLSelectElement).value)} data-testid="add-face-gallery">
        ${galleries.map((g) => html`<option value=${g.galleryId}>${g.name}</option>`)}
      </select></label>
      <label>Person <select value=${personId} disabled=${persons === null} onChange=${(e: Event) => setPersonId((e.target as HTMLSelectElement).value)} data-testid="add-face-person">
        <option value=${NEW}>New person…</option>
        ${(persons ?? []).map((p) => html`<option value=${p.itemId}>${p.name} (${p.itemId})</option>`)}
      </select></label>
    </div>` : null}
    ${galleries?.length && personId === NEW ? html`<div class="row">
      <label>New person id <input value=${newId} required pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,127}" onInput=${(e: Event) => setNewId((e.target as HTMLInputElement).value)} /></label>
      <label>New person's name <input value=${newName} required maxLength=${128} onInput=${(e: Event) => setNewName((e.target as HTMLInputElement).value)} /></label>
    </div>` : null}
    <div class="row">
      <button type="submit" disabled=${busy || !galleryId}>${busy ? 'Adding…' : 'Add face'}</button>
      <button type="button" class="secondary" onClick=${onClose}>Close</button>
    </div>
    ${added ? html`<p class="notice" role="status" data-testid="face-added">${added}</p>` : null}
    <${ErrorPanel} ...${error} />
  </form>`
}
