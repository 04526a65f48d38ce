import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from '../../shared/handler.ts'
import { CopyProcess, type CopyInput } from '../cameras/copy-process.ts'

/** One closed segment of a camera's ring: a short mp4 that starts on a key frame. */
export interface Segment {
  /** Increases with every segment of the recorder (across ffmpeg runs). */
  seq: number
  file: string
  /** Wall-clock ms of its first frame and after its last one. */
  wallStart: number
  wallEnd: number
  bytes: number
}

export interface SegmenterOptions {
  binary: string
  input(): Promise<CopyInput>
  /** The ring folder (exists). */
  dir: string
  segmentSeconds: number
  connectTimeoutMs: number
  stallTimeoutMs: number
  reconnectMinMs: number
  reconnectMaxMs: number
  log: Logger
  onSegment(segment: Segment): void
}

/** A key frame may be this far apart: no segment line for that long is not yet a stall. */
const LONGEST_GOP_MS = 20_000

/**
 * Writes a camera's stream into short mp4 segments without re-encoding (ffmpeg's segment
 * muxer, `-c copy`, a cut at the first key frame after every `segmentSeconds`). ffmpeg lists each
 * segment on stdout as `name,start,end` once it is closed; stream times become wall-clock times
 * through the run's anchor, the smallest (arrival − end) seen: a segment's line arrives when
 * the key frame that ends it does, a little later (never earlier) than its end.
 */
export class Segmenter {
  readonly process: CopyProcess
  private seq = 0
  private run = 0
  private anchor = Infinity
  private partial = ''
  /** Segments are announced in the order ffmpeg listed them. */
  private announced: Promise<void> = Promise.resolve()

  constructor(private readonly options: SegmenterOptions) {
    this.process = new CopyProcess({
      binary: options.binary, input: options.input,
      output: () => {
        this.run++
        this.anchor = Infinity
        this.partial = ''
        return [
          '-map', '0:v:0', '-an', '-sn', '-dn', '-c:v', 'copy',
          '-f', 'segment', '-segment_time', String(options.segmentSeconds), '-segment_format', 'mp4', '-reset_timestamps', '1',
          '-segment_list', 'pipe:1', '-segment_list_type', 'csv', '-y',
          path.join(options.dir, `${Date.now().toString(36)}-${this.run}-%06d.mp4`),
        ]
      },
      onStdout: (chunk) => this.onList(chunk),
      firstOutputTimeoutMs: options.connectTimeoutMs + LONGEST_GOP_MS,
      stallTimeoutMs: options.stallTimeoutMs + LONGEST_GOP_MS,
      reconnectMinMs: options.reconnectMinMs, reconnectMaxMs: options.reconnectMaxMs, log: options.log,
    })
  }

  start(): void {
    this.process.start()
  }

  stop(): Promise<void> {
    return this.process.stop()
  }

  restart(): Promise<void> {
    return this.process.restart()
  }

  private onList(chunk: Buffer): void {
    const now = Date.now()
    const lines = (this.partial + chunk.toString('utf8')).split('\n')
    this.partial = lines.pop() ?? ''
    const run = this.run
    for (const line of lines) {
      const match = /^([^,]+),([\d.]+),([\d.]+)\s*$/.exec(line)
      if (!match) continue
      const [, name, start, end] = match
      // The last segment of a run (ffmpeg stopping) is cut short, and its line is written as it
      // exits, not when a later key frame arrives: it does not move the anchor.
      const whole = Number(end) - Number(start) >= this.options.segmentSeconds - 0.05
      if (whole || this.anchor === Infinity) this.anchor = Math.min(this.anchor, now - Number(end) * 1000)
      const segment = { seq: ++this.seq, file: path.join(this.options.dir, path.basename(name!)), wallStart: this.anchor + Number(start) * 1000, wallEnd: this.anchor + Number(end) * 1000, bytes: 0 }
      this.announced = this.announced.then(() => stat(segment.file)).then((s) => {
        if (run === this.run) this.options.onSegment({ ...segment, bytes: s.size })
      }, (error: Error) => this.options.log.warn({ err: error.message, file: segment.file }, 'a listed segment is missing'))
    }
  }
}
