import { spawn, type ChildProcess } from 'node:child_process'
import type { ApiError } from '../../shared/errors/index.ts'
import type { Logger } from '../../shared/handler.ts'
import { redactText } from './url.ts'
import { classifyFailure, parseInputStream } from './ffmpeg.ts'
import { failure } from './reader.ts'
import type { RelayTicket } from './credential-relay.ts'
import { monotonicNow } from '../../shared/clock.ts'

/** A source's ffmpeg input arguments, the password to redact from its messages, and the relay ticket that stands in for its credentials. */
export interface CopyInput {
  args: string[]
  password: string | null
  ticket?: RelayTicket
  /** Timestamps are the times the device received the packets, µs since epoch (ffmpeg.ts WALLCLOCK_INPUT). */
  wallclock?: boolean
}

export interface CopyProcessOptions {
  binary: string
  /** The source's input arguments, asked again at every (re)connect (the camera's current source). */
  input(): Promise<CopyInput>
  /** Output arguments, asked at every (re)connect: what the copy is written as. */
  output(): string[]
  onStdout(chunk: Buffer): void
  /** The source's video codec, once ffmpeg has opened it (a run may be ended from here). */
  onCodec?(codec: string): void
  /** Every message line of ffmpeg's (credentials removed). */
  onLine?(line: string): void
  /** A run ended by itself (not by stop/restart); a reconnect follows after the backoff. */
  onFailure?(error: ApiError): void
  /** No output within this long after a (re)connect, or between outputs, ends the run. */
  firstOutputTimeoutMs: number
  stallTimeoutMs: number
  reconnectMinMs: number
  reconnectMaxMs: number
  log: Logger
}

export type CopyState = 'connecting' | 'running' | 'offline' | 'stopped'

/**
 * One ffmpeg child copying a camera's video without decoding it (`-c copy`: recording
 * segments, live view fragments), run again with backoff when it fails like a camera reader
 * (runtime/cameras/channel.ts): the delay doubles up to a maximum and is back to the minimum
 * once output flows. Its messages are kept redacted (they quote the URL with credentials).
 */
export class CopyProcess {
  state: CopyState = 'connecting'
  error: ApiError | null = null
  codec: string | null = null
  private child: ChildProcess | null = null
  private exited: Promise<void> = Promise.resolve()
  private retry: NodeJS.Timeout | null = null
  private watchdog: NodeJS.Timeout | null = null
  private delay: number
  private lastOutput = 0
  private hadOutput = false
  private run = 0
  private stopped = false

  constructor(private readonly options: CopyProcessOptions) {
    this.delay = options.reconnectMinMs
  }

  get pid(): number | null {
    return this.child?.pid ?? null
  }

  start(): void {
    if (this.stopped) return
    void this.connect(++this.run)
  }

  private async connect(run: number): Promise<void> {
    this.retry = null
    this.state = 'connecting'
    let input: CopyInput
    try {
      input = await this.options.input()
    } catch (error) {
      return this.failed(run, error as ApiError)
    }
    if (run !== this.run || this.stopped) return input.ticket?.close()
    const child = spawn(this.options.binary, [...input.args, ...this.options.output()], { stdio: ['ignore', 'pipe', 'pipe'] })
    // The relay answers only this child, and only while it runs (credential-relay.ts).
    if (child.pid !== undefined) input.ticket?.bind(child.pid)
    child.once('close', () => input.ticket?.close())
    child.once('error', () => input.ticket?.close())
    this.child = child
    this.hadOutput = false
    this.codec = null
    this.lastOutput = monotonicNow()
    const lines: string[] = []
    this.exited = new Promise((resolve) => child.once('close', () => resolve()))
    child.once('error', (error) => this.failed(run, failure('CameraSourceFailed', `ffmpeg could not start: ${error.message}`)))
    child.once('close', (code, signal) => {
      if (run !== this.run) return
      this.failed(run, failure(classifyFailure(lines.join('\n')), signal ? `ffmpeg ended by ${signal}` : lines.at(-1) ?? `ffmpeg ended (exit code ${code})`))
    })
    let partial = ''
    child.stderr!.setEncoding('utf8')
    child.stderr!.on('data', (text: string) => {
      const parts = (partial + text).split(/\r?\n|\r/)
      partial = parts.pop() ?? ''
      for (const raw of parts) {
        const line = redactText(raw, input.password)
        if (!line.trim()) continue
        lines.push(line)
        if (lines.length > 40) lines.shift()
        this.options.onLine?.(line)
        // The first stream line is the input's (the output's follow under "Output #0").
        const stream = this.codec === null ? parseInputStream(line) : null
        if (stream) {
          this.codec = stream.codec
          this.options.onCodec?.(stream.codec)
        }
      }
    })
    child.stdout!.on('data', (chunk: Buffer) => {
      if (run !== this.run) return
      this.lastOutput = monotonicNow()
      if (!this.hadOutput) {
        this.hadOutput = true
        this.state = 'running'
        this.error = null
        this.delay = this.options.reconnectMinMs
      }
      this.options.onStdout(chunk)
    })
    this.watchdog = setInterval(() => {
      const limit = this.hadOutput ? this.options.stallTimeoutMs : this.options.firstOutputTimeoutMs
      if (monotonicNow() - this.lastOutput > limit) this.failed(run, failure('CameraUnreachable', `no video within ${limit} ms`))
    }, 500)
  }

  /** Ends the current run with `error` (the codec check of a consumer, the watchdog) and reconnects later. */
  fail(error: ApiError): void {
    this.failed(this.run, error)
  }

  private failed(run: number, error: ApiError): void {
    if (run !== this.run || this.stopped || this.retry) return
    this.run++
    this.clearWatchdog()
    this.kill()
    this.error = error
    this.state = 'offline'
    this.options.log.warn({ messageKey: error.item.messageKey, reason: error.item.details.reason }, 'stream copy failed; reconnecting')
    this.options.onFailure?.(error)
    if (this.stopped) return
    const run2 = this.run
    this.retry = setTimeout(() => { void this.connect(run2) }, this.delay)
    this.delay = Math.min(this.delay * 2, this.options.reconnectMaxMs)
  }

  /** Ends the current run and starts another at once (the source changed). */
  async restart(): Promise<void> {
    if (this.stopped) return
    this.run++
    if (this.retry) clearTimeout(this.retry)
    this.retry = null
    this.clearWatchdog()
    this.kill()
    await this.exited
    if (!this.stopped) void this.connect(this.run)
  }

  /** Stops for good; resolves when ffmpeg has exited (it writes its last segment first on SIGTERM). */
  async stop(): Promise<void> {
    this.stopped = true
    this.state = 'stopped'
    this.run++
    if (this.retry) clearTimeout(this.retry)
    this.clearWatchdog()
    this.kill()
    await this.exited
  }

  private clearWatchdog(): void {
    if (this.watchdog) clearInterval(this.watchdog)
    this.watchdog = null
  }

  private kill(): void {
    const child = this.child
    this.child = null
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    // ffmpeg blocked in a read may ignore SIGTERM for a while.
    const hard = setTimeout(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') }, 2000)
    hard.unref()
    child.once('close', () => clearTimeout(hard))
  }
}
