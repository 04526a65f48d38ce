import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { Gallery, GalleryClient, GalleryItem } from '../../client/galleries.ts'
import { galleryKinds } from '../../../shared/galleries/kinds.ts'
import { ConfirmDialog } from '../components/ConfirmDialog.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { GalleryPicture } from '../components/GalleryPicture.ts'
import { IMAGE_ACCEPT, isAcceptedImage, uploadBrowserFile } from '../upload.ts'

interface Added { file: string; ok: boolean; error?: unknown }

/**
 * The items of one gallery (a face gallery's persons) with their pictures: add an item, add
 * images to it by dropping or choosing files (each uploaded, then registered; a refused file
 * is shown with the device's reason), delete an item (confirmed).
 */
export function GalleryItems({ client, account, galleries, gallery, version, onChanged }: {
  client: DeviceClient; account: string; galleries: GalleryClient; gallery: Gallery; version: number; onChanged: () => void
}) {
  const info = galleryKinds[galleries.kind]
  const noun = info.noun.toLowerCase()
  const [items, setItems] = useState<GalleryItem[] | null>(null)
  const [error, setError] = useState<Failure | null>(null)
  const [newId, setNewId] = useState('')
  const [newName, setNewName] = useState('')
  const [busy, setBusy] = useState<string | null>(null)
  const [added, setAdded] = useState<Record<string, Added[]>>({})
  const [dragging, setDragging] = useState<string | null>(null)
  const [confirming, setConfirming] = useState<GalleryItem | null>(null)

  const load = () => galleries.items(gallery.galleryId).then((page) => setItems(page.rows), (e) => setError({ error: e, context: `${info.noun}s` }))
  useEffect(() => { setAdded({}); load() }, [galleries, gallery.galleryId, version])

  const addItem = async (event: Event) => {
    event.preventDefault()
    setError(null)
    setBusy('add')
    try {
      await galleries.addItem({ galleryId: gallery.galleryId, itemId: newId.trim(), name: newName.trim() })
      setNewId('')
      setNewName('')
      await load()
      onChanged()
    } catch (e) {
      setError({ error: e, context: `Add ${noun}` })
    } finally {
      setBusy(null)
    }
  }

  /** Each file in turn: upload (purpose image), then register it with the item. */
  const addImages = async (item: GalleryItem, files: File[]) => {
    if (busy || files.length === 0) return
    setBusy(item.itemId)
    const results: Added[] = []
    for (const file of files) {
      try {
        if (!isAcceptedImage(file)) throw new Error(`${file.name} is not a JPEG, PNG or BMP image.`)
        const uploadId = await uploadBrowserFile(client, account, file, 'image')
        try {
          await galleries.addImage(gallery.galleryId, item.itemId, uploadId)
        } catch (e) {
          // A refused image leaves its upload for a retry (spec 4.7); the console does not retry it.
          client.cancelUpload(uploadId).catch(() => undefined)
          throw e
        }
        results.push({ file: file.name, ok: true })
      } catch (e) {
        results.push({ file: file.name, ok: false, error: e })
      }
      setAdded((all) => ({ ...all, [item.itemId]: [...results] }))
    }
    setBusy(null)
    await load()
    onChanged()
  }

  const deleteConfirmed = async () => {
    const item = confirming!
    setBusy(item.itemId)
    try {
      await galleries.deleteItem(gallery.galleryId, item.itemId)
      await load()
      onChanged()
    } catch (e) {
      setError({ error: e, context: `Delete ${item.name}` })
    } finally {
      setBusy(null)
      setConfirming(null)
    }
  }

  return html`<section class="panel stack" aria-labelledby="items-heading" data-testid="gallery-items">
    <h2 id="items-heading">${gallery.name}: ${noun}s${items ? html` <span class="badge">${items.length}</span>` : null}</h2>
    <${ErrorPanel} ...${error} />
    ${items === null && !error ? html`<p class="hint">Loading…</p>` : null}
    ${items?.length === 0 ? html`<p class="hint">No ${noun}s yet: add one below, then drop its pictures on it.</p>` : null}
    <ul class="items">${(items ?? []).map((item) => html`<li key=${item.itemId} class="item" data-item-id=${item.itemId}>
      <div class="item-head">
        <strong>${item.name}</strong> <code>${item.itemId}</code>
        <button type="button" class="danger-outline" aria-label=${`Delete ${item.name}`} aria-disabled=${busy !== null}
          onClick=${() => { if (!busy) setConfirming(item) }}>Delete</button>
      </div>
      <div class="thumbs" data-testid="pictures">${item.imageIds.map((id) => html`<${GalleryPicture} key=${id} galleries=${galleries} imageId=${id} alt=${`${item.name}, picture ${id}`} />`)}</div>
      <label class=${`drop small${dragging === item.itemId ? ' dragging' : ''}`}
        onDragOver=${(e: DragEvent) => { e.preventDefault(); setDragging(item.itemId) }}
        onDragLeave=${() => setDragging(null)}
        onDrop=${(e: DragEvent) => { e.preventDefault(); setDragging(null); addImages(item, [...(e.dataTransfer?.files ?? [])]) }}>
        <input type="file" class="sr-only" multiple accept=${IMAGE_ACCEPT} disabled=${busy !== null} aria-label=${`Add pictures of ${item.name}`}
          onChange=${(e: Event) => { const input = e.target as HTMLInputElement; addImages(item, [...(input.files ?? [])]); input.value = '' }} />
        <span>${busy === item.itemId ? 'Adding…' : `Drop or choose pictures of ${item.name}${info.subject ? ` (one ${info.subject.noun} each)` : ''}`}</span>
      </label>
      ${(added[item.itemId] ?? []).map((a) => a.ok
        ? html`<p class="hint" data-testid="added">${a.file}: added</p>`
        : html`<${ErrorPanel} error=${a.error} context=${a.file} />`)}
    </li>`)}</ul>
    <form class="row" onSubmit=${addItem} aria-label=${`Add a ${noun}`}>
      <label>${info.noun} id <input value=${newId} required pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,127}" onInput=${(e: Event) => setNewId((e.target as HTMLInputElement).value)} /></label>
      <label>Name <input value=${newName} required maxLength=${128} onInput=${(e: Event) => setNewName((e.target as HTMLInputElement).value)} /></label>
      <button type="submit" disabled=${busy !== null}>Add ${noun}</button>
    </form>
    ${confirming ? html`<${ConfirmDialog} title=${`Delete ${confirming.name}?`} confirmLabel="Delete" busy=${busy === confirming.itemId}
      onConfirm=${deleteConfirmed} onCancel=${() => setConfirming(null)}>
      <p>${confirming.name} and ${confirming.imageIds.length} picture(s) are removed; searches and recognition no longer find this ${noun}.</p>
    </${ConfirmDialog}>` : null}
  </section>`
}
