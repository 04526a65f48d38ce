import { html } from 'htm/preact'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../../client/client.ts'
import { GalleryClient, type Gallery } from '../../client/galleries.ts'
import { GALLERY_KINDS, galleryKinds, type GalleryKind } from '../../../shared/galleries/kinds.ts'
import { ConfirmDialog } from '../components/ConfirmDialog.ts'
import { ErrorPanel, type Failure } from '../components/ErrorPanel.ts'
import { GalleryImport } from './GalleryImport.ts'
import { GalleryItems } from './GalleryItems.ts'
import { GallerySearch } from './GallerySearch.ts'

const plural = (title: string) => title.replace(/y$/, 'ies')
const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`

/**
 * Galleries (spec 4.10 Face, Body, Things gallery): the galleries of a kind with their counts;
 * the open gallery's items (persons) with their pictures, images added by drop; search by
 * image (a face found added to a person from there); and, for face galleries, the import of an
 * archive (spec 4.10 File import).
 */
export function Galleries({ client, account }: { client: DeviceClient; account: string }) {
  const [kind, setKind] = useState<GalleryKind>('face')
  const galleries = useMemo(() => new GalleryClient(client, kind), [client, kind])
  const info = galleryKinds[kind]
  const [rows, setRows] = useState<Gallery[] | null>(null)
  const [openId, setOpenId] = useState<string | null>(null)
  const [error, setError] = useState<Failure | null>(null)
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [confirming, setConfirming] = useState<Gallery | null>(null)
  // Bumped when pictures are added outside the items list (an import, a search result's face): the open gallery's items are read again.
  const [version, setVersion] = useState(0)

  // Two reads in flight (two additions in a row) can be answered out of order: only the latest one's answer counts.
  const latestLoad = useRef(0)
  const load = () => {
    const mine = ++latestLoad.current
    return galleries.galleries().then((page) => {
      if (mine !== latestLoad.current) return
      setRows(page.rows)
      setOpenId((id) => page.rows.some((g) => g.galleryId === id) ? id : page.rows[0]?.galleryId ?? null)
    }, (e) => { if (mine === latestLoad.current) setError({ error: e, context: 'Galleries' }) })
  }
  useEffect(() => { setRows(null); setOpenId(null); setError(null); load() }, [galleries])
  const picturesAdded = () => { load(); setVersion((n) => n + 1) }

  const add = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const created = await galleries.addGallery({ name: name.trim() })
      setName('')
      await load()
      setOpenId(created.galleryId)
    } catch (e) {
      setError({ error: e, context: 'Add gallery' })
    } finally {
      setBusy(false)
    }
  }

  const deleteConfirmed = async () => {
    const gallery = confirming!
    setBusy(true)
    try {
      await galleries.deleteGallery(gallery.galleryId)
      await load()
    } catch (e) {
      setError({ error: e, context: `Delete ${gallery.name}` })
    } finally {
      setBusy(false)
      setConfirming(null)
    }
  }

  const open = rows?.find((g) => g.galleryId === openId) ?? null
  const noun = info.noun.toLowerCase()
  return html`<main class="galleries" id="main">
    <h1 tabindex="-1">Galleries</h1>
    <div class="stack">
      <label class="kinds">Kind of gallery
        <select value=${kind} data-testid="kind" onChange=${(e: Event) => setKind((e.target as HTMLSelectElement).value as GalleryKind)}>
          ${GALLERY_KINDS.map((k) => html`<option value=${k}>${plural(galleryKinds[k].title)}</option>`)}
        </select>
      </label>
      <div class="columns">
        <section class="panel stack" aria-labelledby="galleries-heading">
          <h2 id="galleries-heading">${plural(info.title)}${rows ? html` <span class="badge">${rows.length}</span>` : null}</h2>
          <${ErrorPanel} ...${error} />
          ${rows === null && !error ? html`<p class="hint">Loading…</p>` : null}
          ${rows?.length === 0 ? html`<p class="hint">No ${info.title.toLowerCase()} yet.</p>` : null}
          ${rows?.length ? html`<ul class="gallery-list" data-testid="galleries">${rows.map((g) => html`<li key=${g.galleryId} data-gallery-id=${g.galleryId}>
            <button type="button" class="link" aria-current=${g.galleryId === openId ? 'true' : undefined} onClick=${() => setOpenId(g.galleryId)}>${g.name}</button>
            <span class="hint" data-testid="counts">${counted(g.items, noun)} · ${counted(g.images, 'picture')}</span>
            <button type="button" class="danger-outline" aria-label=${`Delete gallery ${g.name}`} aria-disabled=${busy} onClick=${() => { if (!busy) setConfirming(g) }}>Delete</button>
          </li>`)}</ul>` : null}
          <form class="row" onSubmit=${add} aria-label="Add a gallery">
            <label>New gallery <input value=${name} required maxLength=${128} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} /></label>
            <button type="submit" disabled=${busy}>Add gallery</button>
          </form>
        </section>
        <div class="stack">
          ${open ? html`<${GalleryItems} client=${client} account=${account} galleries=${galleries} gallery=${open} version=${version} onChanged=${load} />` : null}
          <${GallerySearch} client=${client} account=${account} galleries=${galleries} gallery=${open} known=${rows ?? []} onAdded=${picturesAdded} />
          ${open && kind === 'face' ? html`<${GalleryImport} key=${open.galleryId} client=${client} account=${account} gallery=${open} onDone=${picturesAdded} />` : null}
        </div>
      </div>
    </div>
    ${confirming ? html`<${ConfirmDialog} title=${`Delete gallery ${confirming.name}?`} confirmLabel="Delete" busy=${busy}
      onConfirm=${deleteConfirmed} onCancel=${() => setConfirming(null)}>
      <p>The gallery, its ${counted(confirming.items, noun)} and ${counted(confirming.images, 'picture')} are removed.</p>
    </${ConfirmDialog}>` : null}
  </main>`
}
