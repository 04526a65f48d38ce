import type { Region } from '../../shared/tasks/types.ts'

/**
 * A region's corners as an operator types them, `x,y` fractions of the picture (0,0 top left,
 * 1,1 bottom right) separated by spaces or `;`: `0.3,0 0.85,0 0.85,1 0.3,1` → the polygon of
 * `taskConfig.regions` (docs/detection.md "Image detection", spec 2.4). Null unless every corner is two
 * numbers in 0..1 and there are 3 to 64 of them.
 */
export function polygonOf(text: string): Region['polygon'] | null {
  const corners = text.trim().replace(/\s*,\s*/g, ',').split(/[\s;]+/).filter(Boolean)
  if (corners.length < 3 || corners.length > 64) return null
  const polygon = corners.map((corner) => {
    const [x, y, extra] = corner.split(',')
    const xRatio = Number(x), yRatio = Number(y)
    return extra === undefined && x && y && [xRatio, yRatio].every((v) => v >= 0 && v <= 1) ? { xRatio, yRatio } : null
  })
  return polygon.every((p) => p !== null) ? polygon as Region['polygon'] : null
}
