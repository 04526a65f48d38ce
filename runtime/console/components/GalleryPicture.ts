import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import type { GalleryClient } from '../../client/galleries.ts'

/** A stored gallery picture (fetched with the mtk, shown from a Blob URL released on unmount). */
export function GalleryPicture({ galleries, imageId, alt }: { galleries: GalleryClient; imageId: number; alt: string }) {
  const [url, setUrl] = useState<string | null>(null)
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    const controller = new AbortController()
    let made: string | null = null
    galleries.picture(imageId, controller.signal).then((blob) => { made = URL.createObjectURL(blob); setUrl(made) }, () => { if (!controller.signal.aborted) setFailed(true) })
    return () => { controller.abort(); if (made) URL.revokeObjectURL(made) }
  }, [galleries, imageId])
  if (failed) return html`<span class="thumb missing" role="img" aria-label=${`${alt} (not available)`}>?</span>`
  return url ? html`<img class="thumb" src=${url} alt=${alt} data-image-id=${imageId} />` : html`<span class="thumb loading" aria-hidden="true"></span>`
}
