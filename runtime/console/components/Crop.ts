import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'

/**
 * A box of a local picture (a file the operator chose), cut out in the browser: a search
 * result's face shown as the face itself, not as numbers. Nothing is sent anywhere.
 */
export function Crop({ picture, box, alt, testId }: { picture: Blob; box: { x: number; y: number; width: number; height: number }; alt: string; testId?: string }) {
  const [url, setUrl] = useState<string | null>(null)
  useEffect(() => {
    let live = true
    createImageBitmap(picture).then((bitmap) => {
      const canvas = document.createElement('canvas')
      const scale = Math.min(1, 160 / Math.max(1, box.width, box.height))
      canvas.width = Math.max(1, Math.round(box.width * scale))
      canvas.height = Math.max(1, Math.round(box.height * scale))
      canvas.getContext('2d')?.drawImage(bitmap, box.x, box.y, box.width, box.height, 0, 0, canvas.width, canvas.height)
      bitmap.close()
      if (live) setUrl(canvas.toDataURL('image/jpeg', 0.9))
    }, () => undefined)
    return () => { live = false }
  }, [picture, box.x, box.y, box.width, box.height])
  return url ? html`<img class="thumb" src=${url} alt=${alt} data-testid=${testId} />` : html`<span class="thumb loading" aria-hidden="true"></span>`
}
