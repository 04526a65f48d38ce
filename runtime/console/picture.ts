import { useEffect, useState } from 'preact/hooks'
import type { DeviceClient } from '../client/client.ts'

/**
 * An image source for a picture the device answered (spec 2.6 `fullPicture` rules, snapshot
 * URLs): a `data:` URL as it is; a URL fetched with the mtk (an <img> sends no header) into a
 * `blob:` URL, released when the picture changes or leaves the page.
 */
export function usePicture(client: DeviceClient, src: string | null): { url: string | null; error: unknown } {
  const [state, setState] = useState<{ url: string | null; error: unknown }>({ url: null, error: null })
  useEffect(() => {
    if (!src || src.startsWith('data:')) {
      setState({ url: src, error: null })
      return
    }
    let objectUrl: string | null = null
    let live = true
    setState({ url: null, error: null })
    client.picture(src).then((blob) => {
      if (!live) return
      objectUrl = URL.createObjectURL(blob)
      setState({ url: objectUrl, error: null })
    }, (error) => live && setState({ url: null, error }))
    return () => {
      live = false
      if (objectUrl) URL.revokeObjectURL(objectUrl)
    }
  }, [src])
  return state
}
