import sharp from 'sharp'

/** One character's coverage mask (0–255), `width` × the set's height, drawn from the cell's top left. */
export interface Glyph { width: number; coverage: Uint8Array }

/** The glyphs of one font size. */
export interface GlyphSet {
  height: number
  /** Advance of a narrow character (a monospaced font: every Latin character). */
  cellWidth: number
  get(char: string): Glyph | undefined
}

const FONT = 'DejaVu Sans Mono, monospace'
/** DejaVu Sans Mono: advance 0.602 em, ascent 0.928 em, descent 0.236 em. */
const ADVANCE_EM = 0.602
const ASCENT_EM = 0.93
const HEIGHT_EM = 1.17
/** Glyphs kept across overlays; once past it the atlas starts again (labels use few characters). */
const MAX_GLYPHS = 4096

const atlas = new Map<number, Map<string, Glyph>>()
let glyphCount = 0

/** East Asian scripts and symbols past U+2E80 take two cells in a monospaced font. */
const isWide = (char: string) => char.codePointAt(0)! >= 0x2e80

export const glyphCellWidth = (set: GlyphSet, char: string) => (isWide(char) ? 2 : 1) * set.cellWidth

/**
 * The glyphs of `text` at `size` px, rendered once per character and size with librsvg (one
 * small SVG per overlay holding only the characters not seen before) and kept as coverage
 * masks: a label costs a few small copies instead of rasterising text over the picture.
 */
export async function glyphsFor(size: number, text: string): Promise<GlyphSet> {
  const cellWidth = Math.ceil(size * ADVANCE_EM)
  const height = Math.ceil(size * HEIGHT_EM)
  if (glyphCount > MAX_GLYPHS) {
    atlas.clear()
    glyphCount = 0
  }
  const glyphs = atlas.get(size) ?? new Map<string, Glyph>()
  atlas.set(size, glyphs)
  const missing = [...new Set(text)].filter((c) => !glyphs.has(c))
  if (missing.length > 0) {
    const rendered = await renderGlyphs(missing, size, cellWidth, height)
    for (const [char, glyph] of rendered) glyphs.set(char, glyph)
    glyphCount += rendered.size
  }
  return { height, cellWidth, get: (char) => glyphs.get(char) }
}

async function renderGlyphs(chars: string[], size: number, cellWidth: number, height: number): Promise<Map<string, Glyph>> {
  const escape = (c: string) => `&#${c.codePointAt(0)};`
  let x = 0
  const cells = chars.map((char) => {
    const cell = { char, x, width: (isWide(char) ? 2 : 1) * cellWidth }
    x += cell.width
    return cell
  })
  const texts = cells.map((c) => `<text x="${c.x}" y="${Math.round(size * ASCENT_EM)}">${escape(c.char)}</text>`).join('')
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${x}" height="${height}"><g font-family="${FONT}" font-size="${size}" fill="#fff" xml:space="preserve">${texts}</g></svg>`
  const { data } = await sharp(Buffer.from(svg)).ensureAlpha().extractChannel(3).raw().toBuffer({ resolveWithObject: true })
  const out = new Map<string, Glyph>()
  for (const cell of cells) {
    const coverage = new Uint8Array(cell.width * height)
    for (let y = 0; y < height; y++) coverage.set(data.subarray(y * x + cell.x, y * x + cell.x + cell.width), y * cell.width)
    out.set(cell.char, { width: cell.width, coverage })
  }
  return out
}
