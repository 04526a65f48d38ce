/** Reads an image with sharp and letterboxes it into a detector's square RGB input. */
import sharp from 'sharp'
import { letterboxGeometry, type Letterbox } from './letterbox.ts'

/** Pad colour of the unused part of the square (the usual detector-training grey). */
const PAD = { r: 114, g: 114, b: 114 }

export async function letterboxedRgb(image: string | Buffer, size: number): Promise<{ rgb: Uint8Array; letterbox: Letterbox }> {
  // rotate(): honour EXIF orientation, as a viewer shows the photo
  const oriented = sharp(image).rotate()
  const { info } = await oriented.clone().raw().toBuffer({ resolveWithObject: true })
  const letterbox = letterboxGeometry(info.width, info.height, size)
  const rgb = await oriented
    .resize(letterbox.width, letterbox.height, { fit: 'fill' })
    .extend({ right: size - letterbox.width, bottom: size - letterbox.height, background: PAD })
    .removeAlpha()
    .raw()
    .toBuffer()
  return { rgb: new Uint8Array(rgb.buffer, rgb.byteOffset, rgb.byteLength), letterbox }
}
