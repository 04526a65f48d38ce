import sharp from 'sharp'
import type { DetectionResultCore, Target } from '../../../shared/inference/types.ts'
import type { RgbImage } from './rgb-image.ts'

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

interface Piece { input: Buffer; left: number; top: number }

/**
 * One small SVG per target (box, label, landmarks, polygon) placed where the target is:
 * rasterizing and blending a few small pieces costs far less than one image-sized SVG.
 */
export function overlayPieces(result: DetectionResultCore, width: number, height: number): Piece[] {
  const stroke = Math.max(2, Math.round(Math.max(width, height) / 400))
  const font = Math.max(12, Math.round(Math.max(width, height) / 60))
  const pieces: Piece[] = []
  for (const area of result.areaList) for (const t of area.targetList) {
    const piece = targetPiece(t, width, height, stroke, font)
    if (piece) pieces.push(piece)
  }
  return pieces
}

function targetPiece(t: Target, width: number, height: number, stroke: number, font: number): Piece | null {
  const { x, y, width: w, height: h } = t.box
  const label = t.confidence.map((c) => `${c.label} ${c.confidence.toFixed(2)}`).join(' · ')
  const labelAbove = y > font + 4
  const labelY = labelAbove ? y - 4 : y + h + font
  const labelWidth = Math.ceil(label.length * font * 0.62)
  // Region of the image this piece covers, clamped to the image.
  const left = Math.max(0, Math.floor(x - stroke * 2))
  const top = Math.max(0, Math.floor((labelAbove ? labelY - font : y) - stroke * 2))
  const right = Math.min(width, Math.ceil(Math.max(x + w, x + labelWidth) + stroke * 2))
  const bottom = Math.min(height, Math.ceil(Math.max(y + h, labelY + font / 3) + stroke * 2))
  if (right <= left || bottom <= top) return null
  const colour = t.bLogicResult === false ? '#ffb000' : '#00e060'
  const parts = [`<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="none" stroke="${colour}" stroke-width="${stroke}"/>`]
  if (t.maskPolygon.length > 0)
    parts.push(`<polygon points="${t.maskPolygon.map((p) => `${p.xRatio * width},${p.yRatio * height}`).join(' ')}" fill="#00a0ff" fill-opacity="0.2" stroke="#00a0ff" stroke-width="${stroke}"/>`)
  for (const p of t.landmark) parts.push(`<circle cx="${p.xRatio}" cy="${p.yRatio}" r="${stroke * 1.5}" fill="#ff3060"/>`)
  parts.push(`<text x="${x}" y="${labelY}" font-family="DejaVu Sans, sans-serif" font-size="${font}" fill="${colour}" stroke="#000" stroke-width="0.6">${escapeXml(label)}</text>`)
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${right - left}" height="${bottom - top}"><g transform="translate(${-left} ${-top})">${parts.join('')}</g></svg>`
  return { input: Buffer.from(svg), left, top }
}

/** Draws the overlay onto the image and encodes JPEG: spec 2.6 `fullPicture`. */
export async function renderOverlay(image: RgbImage, result: DetectionResultCore, quality = 80): Promise<Buffer> {
  const base = sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
  const pieces = overlayPieces(result, image.width, image.height)
  return (pieces.length > 0 ? base.composite(pieces) : base).jpeg({ quality }).toBuffer()
}
