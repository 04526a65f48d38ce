/**
 * Writes BMP files field by field, the way real encoders lay them out, so the decoder is
 * tested against the format: V4/V5 headers, colour masks, a colour table, a gap before
 * the pixels (bfOffBits), bottom-up or top-down rows.
 */
export interface BmpLayout {
  width: number
  height: number
  bitsPerPixel: 1 | 4 | 8 | 16 | 24 | 32
  /** 40 (BITMAPINFOHEADER), 108 (V4) or 124 (V5). */
  headerSize: 40 | 108 | 124
  /** 0 BI_RGB, 3 BI_BITFIELDS, 1 BI_RLE8 (to test refusal). */
  compression?: number
  /** Red, green, blue, alpha masks: written in the header (V4/V5) or after a 40-byte one. */
  masks?: [number, number, number, number]
  /** Colour table entries as [r, g, b]. */
  palette?: [number, number, number][]
  topDown?: boolean
  /** Bytes left between the colour table and the pixels (bfOffBits points past them). */
  gap?: number
  /** One unpadded row per image row, top row first, already in the file's pixel encoding. */
  rows: Buffer[]
}

export function writeBmp(layout: BmpLayout): Buffer {
  const { width, height, bitsPerPixel, headerSize, compression = 0, masks, palette = [], topDown = false, gap = 0 } = layout
  const maskBytes = masks && headerSize === 40 ? 12 : 0
  const paletteAt = 14 + headerSize + maskBytes
  const pixelOffset = paletteAt + palette.length * 4 + gap
  const rowBytes = Math.floor((width * bitsPerPixel + 31) / 32) * 4
  const out = Buffer.alloc(pixelOffset + rowBytes * height, 0)
  out.write('BM', 0, 'ascii')
  out.writeUInt32LE(out.length, 2)
  out.writeUInt32LE(pixelOffset, 10)
  out.writeUInt32LE(headerSize, 14)
  out.writeInt32LE(width, 18)
  out.writeInt32LE(topDown ? -height : height, 22)
  out.writeUInt16LE(1, 26)
  out.writeUInt16LE(bitsPerPixel, 28)
  out.writeUInt32LE(compression, 30)
  out.writeUInt32LE(rowBytes * height, 34)
  out.writeInt32LE(2835, 38) // 72 dpi
  out.writeInt32LE(2835, 42)
  out.writeUInt32LE(palette.length, 46)
  if (masks) masks.slice(0, headerSize === 40 ? 3 : 4).forEach((mask, i) => out.writeUInt32LE(mask >>> 0, 54 + i * 4))
  if (headerSize >= 108) out.write('BGRs', 70, 'latin1') // LCS_sRGB, stored little-endian as ImageMagick does
  if (headerSize === 124) out.writeUInt32LE(4, 122) // bV5Intent LCS_GM_IMAGES
  palette.forEach(([r, g, b], i) => { out[paletteAt + i * 4] = b; out[paletteAt + i * 4 + 1] = g; out[paletteAt + i * 4 + 2] = r })
  // Junk in the gap: a decoder that reads pixels right after the table gets it wrong.
  out.fill(0xa5, pixelOffset - gap, pixelOffset)
  layout.rows.forEach((row, y) => row.copy(out, pixelOffset + (topDown ? y : height - 1 - y) * rowBytes))
  return out
}

/** RGB pixels (row-major) as 24-bit BMP rows (B, G, R). */
export function bgrRows(rgb: Buffer, width: number, height: number): Buffer[] {
  return Array.from({ length: height }, (_, y) => {
    const row = Buffer.alloc(width * 3)
    for (let x = 0; x < width; x++) {
      const s = (y * width + x) * 3
      row[x * 3] = rgb[s + 2]!
      row[x * 3 + 1] = rgb[s + 1]!
      row[x * 3 + 2] = rgb[s]!
    }
    return row
  })
}
