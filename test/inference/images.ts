import sharp from 'sharp'
import { crc32 } from 'node:zlib'

/** A standard 24-bit bottom-up BMP (BITMAPINFOHEADER), written here so the decoder is tested against the format, not against its own encoder. */
export function encodeBmp24(rgb: Buffer, width: number, height: number): Buffer {
  const rowBytes = Math.ceil((width * 3) / 4) * 4
  const out = Buffer.alloc(54 + rowBytes * height)
  out.write('BM', 0, 'ascii')
  out.writeUInt32LE(out.length, 2)
  out.writeUInt32LE(54, 10)
  out.writeUInt32LE(40, 14)
  out.writeInt32LE(width, 18)
  out.writeInt32LE(height, 22)
  out.writeUInt16LE(1, 26)
  out.writeUInt16LE(24, 28)
  out.writeUInt32LE(rowBytes * height, 34)
  for (let y = 0; y < height; y++) {
    const row = 54 + (height - 1 - y) * rowBytes
    for (let x = 0; x < width; x++) {
      const s = (y * width + x) * 3
      out[row + x * 3] = rgb[s + 2]!
      out[row + x * 3 + 1] = rgb[s + 1]!
      out[row + x * 3 + 2] = rgb[s]!
    }
  }
  return out
}

const chunk = (type: string, data: Buffer) => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'ascii')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0)
  return Buffer.concat([head, data, crc])
}

/** A PNG whose header claims `width`×`height` RGB pixels with almost no data: a decompression bomb's header. */
export function pngBombHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 2 // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', Buffer.from([0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01])),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/** A PNG with known lines of text, rendered by sharp from SVG (DejaVu Sans, 48 px, baselines at y = 90 + i·110). */
export async function renderTextLines(lines: string[], options: { rotate180?: boolean } = {}): Promise<Buffer> {
  const rows = lines.map((line, i) => `<text x="40" y="${90 + i * 110}" font-family="DejaVu Sans" font-size="48">${line}</text>`).join('')
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="${60 + lines.length * 110}"><rect width="100%" height="100%" fill="white"/>${rows}</svg>`
  const image = sharp(Buffer.from(svg))
  return (options.rotate180 ? image.rotate(180) : image).png().toBuffer()
}
