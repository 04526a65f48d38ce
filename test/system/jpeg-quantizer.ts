/** The first entry of a JPEG's first quantization table (DQT, table 0: luminance), in zigzag order. */
export function firstLuminanceQuantizer(jpeg: Buffer): number {
  for (let at = 2; at + 4 < jpeg.length;) {
    if (jpeg[at] !== 0xff) throw new Error('not a JPEG marker')
    const marker = jpeg[at + 1]!
    const length = jpeg.readUInt16BE(at + 2)
    if (marker === 0xdb) {
      const precisionAndId = jpeg[at + 4]!
      if ((precisionAndId & 0x0f) === 0) return (precisionAndId >> 4) === 0 ? jpeg[at + 5]! : jpeg.readUInt16BE(at + 5)
    }
    at += 2 + length
  }
  throw new Error('no luminance quantization table')
}
