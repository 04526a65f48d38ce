/**
 * A cheap motion check on a small grey frame, as Frigate does: the frame is reduced to a
 * grid of grey cells, compared with a slowly adapting background, and counts as motion when
 * enough cells changed. Costs a pass over a sample of the pixels, no decoding.
 */
export class MotionDetector {
  private background: Float32Array | null = null
  private lastTime = 0

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

  /** Whether `rgb` (packed RGB, width × height, taken at `time` ms) moved against the background; updates it. */
  moved(rgb: Uint8Array, width: number, height: number, time: number): boolean {
    const cells = this.cols * this.rows
    const grey = new Float32Array(cells)
    const stepX = width / this.cols
    const stepY = height / this.rows
    for (let r = 0; r < this.rows; r++) {
      for (let c = 0; c < this.cols; c++) {
        // 4 samples per cell are enough against noise at this scale.
        let sum = 0
        for (const [dx, dy] of [[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]] as const) {
          const i = (Math.floor((r + dy) * stepY) * width + Math.floor((c + dx) * stepX)) * 3
          sum += 0.299 * rgb[i]! + 0.587 * rgb[i + 1]! + 0.114 * rgb[i + 2]!
        }
        grey[r * this.cols + c] = sum / 4
      }
    }
    const background = this.background
    const elapsed = time - this.lastTime
    this.lastTime = time
    if (!background || background.length !== cells) {
      this.background = grey
      return true
    }
    const alpha = 1 - Math.exp(-Math.max(0, elapsed) / this.followMs)
    let changed = 0
    for (let i = 0; i < cells; i++) {
      if (Math.abs(grey[i]! - background[i]!) > this.threshold) changed++
      background[i] = background[i]! + alpha * (grey[i]! - background[i]!)
    }
    return changed / cells >= this.minChanged
  }
}
