import type { TargetBox } from '../../shared/inference/types.ts'
import type { Region } from '../../shared/tasks/types.ts'
import { pointInPolygon } from '../sidecar/pipeline/geometry.ts'

/** A patch of connected changed cells, in the frame's pixels. */
export interface MotionRegion {
  box: TargetBox
  /** Changed cells in the patch (the grid's, see MotionDetector). */
  cells: number
}

export interface Motion {
  /** Enough cells changed (`minChanged` of them, anywhere) to count as motion. */
  moved: boolean
  /**
   * Where: the cells that differ from the background and from the previous frame (what moves
   * now), grouped into connected patches (8 neighbours), largest first.
   */
  regions: MotionRegion[]
  /** The fewest changed cells that count as motion: a patch this large is motion on its own. */
  minCells: number
}

const SAMPLES = [[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]] as const

/**
 * A cheap motion check on a small grey frame, as Frigate does: the frame is reduced to a
 * grid of grey cells, compared with a slowly adapting background, and counts as motion when
 * enough cells changed; the cells that also changed since the previous frame, grouped into
 * patches, say where. Costs a pass over a sample of the pixels, no decoding.
 */
export class MotionDetector {
  private background: Float32Array | null = null
  private previous: Float32Array | null = null
  private lastTime = 0
  /** Cells whose centre is inside a motion mask (1): their changes are never motion. */
  private masked: Uint8Array | null = null

  constructor(
    private readonly cols = 64,
    private readonly rows = 36,
    /** Grey level change (0-255) a cell needs to count as changed. */
    private readonly threshold = 20,
    /** Share of cells that must change. */
    private readonly minChanged = 0.003,
    /**
     * How fast the background follows the scene (time constant, ms): a person who stood still
     * and left stops counting as motion about 2 time constants later, whatever the frame rate.
     */
    private readonly followMs = 800,
  ) {}

  /** The motion masks (taskConfig.motionMasks, ratios of the picture): a cell whose centre is inside one is ignored. */
  mask(masks: Region['polygon'][]): this {
    const { cols, rows } = this
    const masked = new Uint8Array(cols * rows)
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++) {
        const centre = { x: (c + 0.5) / cols, y: (r + 0.5) / rows }
        if (masks.some((polygon) => pointInPolygon(centre, polygon.map((p) => ({ x: p.xRatio, y: p.yRatio }))))) masked[r * cols + c] = 1
      }
    this.masked = masks.length > 0 ? masked : null
    return this
  }

  /** Where `rgb` (packed RGB, width × height, taken at `time` ms) moved against the background; updates it. */
  detect(rgb: Uint8Array, width: number, height: number, time: number): Motion {
    const cells = this.cols * this.rows
    const minCells = Math.max(1, Math.ceil(this.minChanged * cells))
    const grey = new Float32Array(cells)
    const stepX = width / this.cols
    const stepY = height / this.rows
    for (let r = 0; r < this.rows; r++) {
      for (let c = 0; c < this.cols; c++) {
        // 4 samples per cell are enough against noise at this scale.
        let sum = 0
        for (const [dx, dy] of SAMPLES) {
          const i = (Math.floor((r + dy) * stepY) * width + Math.floor((c + dx) * stepX)) * 3
          sum += 0.299 * rgb[i]! + 0.587 * rgb[i + 1]! + 0.114 * rgb[i + 2]!
        }
        grey[r * this.cols + c] = sum / 4
      }
    }
    const background = this.background
    const elapsed = time - this.lastTime
    this.lastTime = time
    const previous = this.previous
    this.previous = grey
    if (!background || !previous) {
      // The first frame: everything is new.
      this.background = grey.slice()
      return { moved: true, regions: [{ box: { x: 0, y: 0, width, height }, cells }], minCells }
    }
    const alpha = 1 - Math.exp(-Math.max(0, elapsed) / this.followMs)
    const changed = new Uint8Array(cells)
    let count = 0
    for (let i = 0; i < cells; i++) {
      if (this.masked?.[i] !== 1 && Math.abs(grey[i]! - background[i]!) > this.threshold) {
        count++
        // Where: only what also changed since the previous frame moves now; the trail the
        // background leaves behind a walker, and the ghost of one who left, fade without changing.
        if (Math.abs(grey[i]! - previous[i]!) > this.threshold) changed[i] = 1
      }
      background[i] = background[i]! + alpha * (grey[i]! - background[i]!)
    }
    const regions = this.patches(changed).map(({ c0, r0, c1, r1, cells }) => {
      const [x, y] = [Math.floor(c0 * stepX), Math.floor(r0 * stepY)]
      return { box: { x, y, width: Math.ceil((c1 + 1) * stepX) - x, height: Math.ceil((r1 + 1) * stepY) - y }, cells }
    })
    return { moved: count >= minCells, regions, minCells }
  }

  /** The connected patches of changed cells (flood fill, 8 neighbours), in cells, largest first. */
  private patches(changed: Uint8Array): { c0: number; r0: number; c1: number; r1: number; cells: number }[] {
    const { cols, rows } = this
    const found: { c0: number; r0: number; c1: number; r1: number; cells: number }[] = []
    const stack: number[] = []
    for (let start = 0; start < changed.length; start++) {
      if (changed[start] !== 1) continue
      const patch = { c0: cols, r0: rows, c1: -1, r1: -1, cells: 0 }
      changed[start] = 2
      stack.push(start)
      while (stack.length > 0) {
        const i = stack.pop()!
        const r = Math.floor(i / cols)
        const c = i - r * cols
        patch.cells++
        patch.c0 = Math.min(patch.c0, c); patch.c1 = Math.max(patch.c1, c)
        patch.r0 = Math.min(patch.r0, r); patch.r1 = Math.max(patch.r1, r)
        for (let nr = Math.max(0, r - 1); nr <= Math.min(rows - 1, r + 1); nr++)
          for (let nc = Math.max(0, c - 1); nc <= Math.min(cols - 1, c + 1); nc++) {
            const j = nr * cols + nc
            if (changed[j] === 1) { changed[j] = 2; stack.push(j) }
          }
      }
      found.push(patch)
    }
    return found.sort((a, b) => b.cells - a.cells)
  }
}
