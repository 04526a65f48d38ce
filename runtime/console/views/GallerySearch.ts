import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import type { Gallery, GalleryClient, SearchRegion } from '../../client/galleries.ts'
import type { GalleryItem, GalleryMatch } from '../../../shared/galleries/types.ts'
import { Crop } from '../components/Crop.ts'
import { GalleryPicture } from '../components/GalleryPicture.ts'
import { galleryKinds } from '../../../shared/galleries/kinds.ts'
import { AddFaceToGallery } from '../components/AddFaceToGallery.ts'
import { ErrorPanel } from '../components/ErrorPanel.ts'
import { IMAGE_ACCEPT, isAcceptedImage, uploadBrowserFile } from '../upload.ts'

const TOP_K = 5

/**
 * Search by image (spec 4.10): an image dropped or chosen is uploaded and searched in the open
 * gallery (or all of the kind); each region found (face, person, or the whole image) is listed
 * with its closest items and their similarity, best first. A face found can be added to a
 * person of a face gallery ("Add to gallery"; `onAdded` afterwards).
 */
export function GallerySearch({ client, account, galleries, gallery, known = [], onAdded }: {
  client: DeviceClient; account: string; galleries: GalleryClient; gallery: Gallery | null; known?: Gallery[]; onAdded: () => void
}) {
  const galleryName = (id: string) => known.find((g) => g.galleryId === id)?.name ?? id
  const [file, setFile] = useState<File | null>(null)
  const [busy, setBusy] = useState(false)
  const [dragging, setDragging] = useState(false)
  const [regions, setRegions] = useState<SearchRegion[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [adding, setAdding] = useState<number | null>(null)
  // The matched items' pictures: each gallery's items read once per search.
  const [items, setItems] = useState<Record<string, GalleryItem[]>>({})
  useEffect(() => {
    const wanted = [...new Set((regions ?? []).flatMap((r) => r.matches.map((m) => m.galleryId)))].filter((id) => !items[id])
    for (const id of wanted) galleries.items(id).then((page) => setItems((old) => ({ ...old, [id]: page.rows })), () => undefined)
  }, [regions])
  const pictureOf = (m: GalleryMatch) => items[m.galleryId]?.find((i) => i.itemId === m.itemId)?.imageIds[0] ?? null
  const info = galleryKinds[galleries.kind]

  const search = async (chosen: File | null | undefined) => {
    if (!chosen || busy) return
    setFile(chosen)
    setRegions(null)
    setItems({})
    setAdding(null)
    setError(null)
    if (!isAcceptedImage(chosen)) { setError(new Error(`${chosen.name} is not a JPEG, PNG or BMP image.`)); return }
    setBusy(true)
    let uploadId: string | null = null
    try {
      uploadId = await uploadBrowserFile(client, account, chosen, 'image')
      setRegions(await galleries.search({ uploadId, galleryId: gallery?.galleryId, topK: TOP_K }))
      uploadId = null
    } catch (e) {
      setError(e)
    } finally {
      // A failed search leaves its upload for a retry (spec 4.7): the console releases it.
      if (uploadId) client.cancelUpload(uploadId).catch(() => undefined)
      setBusy(false)
    }
  }

  const what = info.subject?.noun ?? 'image'
  return html`<section class="panel stack" aria-labelledby="search-heading">
    <h2 id="search-heading">Search by image</h2>
    <p class="hint">In ${gallery ? html`<strong>${gallery.name}</strong>` : `every ${info.title.toLowerCase()}`}: the ${TOP_K} closest ${info.noun.toLowerCase()}s for each ${what} found.</p>
    <label class=${`drop${dragging ? ' dragging' : ''}`}
      onDragOver=${(e: DragEvent) => { e.preventDefault(); setDragging(true) }}
      onDragLeave=${() => setDragging(false)}
      onDrop=${(e: DragEvent) => { e.preventDefault(); setDragging(false); search(e.dataTransfer?.files?.[0]) }}>
      <input type="file" class="sr-only" accept=${IMAGE_ACCEPT} disabled=${busy} data-testid="search-file"
        onChange=${(e: Event) => { const input = e.target as HTMLInputElement; search(input.files?.[0]); input.value = '' }} />
      <span>${busy ? 'Searching…' : file ? html`<strong>${file.name}</strong>: drop or choose another image` : 'Drop or choose an image to search with'}</span>
    </label>
    <${ErrorPanel} error=${error} context="Search" />
    ${regions?.length === 0 ? html`<p class="notice" role="status" data-testid="search-none">No ${what} found in the image.</p>` : null}
    ${regions && regions.length > 0 ? html`<ol class="regions" data-testid="search-results" aria-label="Search results">
      ${regions.map((region, i) => html`<li data-region=${i} data-box=${[region.box.x, region.box.y, region.box.width, region.box.height].join(',')}>
        ${file && info.subject ? html`<${Crop} picture=${file} box=${region.box} alt=${`${info.subject.noun} ${i + 1} of the searched image`} testId="search-crop" />` : null}
        <p>${info.subject ? `${info.subject.noun[0]!.toUpperCase()}${info.subject.noun.slice(1)} ${i + 1}` : 'The image'} at ${region.box.x}, ${region.box.y} (${region.box.width} × ${region.box.height} px)
          ${galleries.kind === 'face' && file ? html` <button type="button" class="secondary" aria-label=${`Add to gallery: face ${i + 1}`} aria-expanded=${adding === i}
            onClick=${() => setAdding(adding === i ? null : i)}>Add to gallery</button>` : null}</p>
        ${region.matches.length === 0 ? html`<p class="hint">No match.</p>` : html`<table class="matches">
          <thead><tr><th scope="col">${info.noun}</th><th scope="col">Picture</th><th scope="col">Gallery</th><th scope="col">Similarity</th></tr></thead>
          <tbody>${region.matches.map((m) => html`<tr data-item-id=${m.itemId}>
            <th scope="row">${m.name}</th>
            <td>${pictureOf(m) !== null ? html`<${GalleryPicture} galleries=${galleries} imageId=${pictureOf(m)} alt=${`Picture of ${m.name}`} />` : null}</td>
            <td data-testid="match-gallery">${galleryName(m.galleryId)}</td>
            <td data-testid="similarity">${(m.similarity * 100).toFixed(1)} %</td>
          </tr>`)}</tbody>
        </table>`}
        ${adding === i && file ? html`<${AddFaceToGallery} client=${client} account=${account} picture=${file} box=${region.box} title=${`Face ${i + 1}`}
          galleryId=${gallery?.galleryId} onAdded=${onAdded} onClose=${() => setAdding(null)} />` : null}
      </li>`)}
    </ol>` : null}
  </section>`
}
