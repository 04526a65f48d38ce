import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { catalogue } from '../../shared/errors/catalogue.ts'

export const ROOT = path.resolve(import.meta.dirname, '../..')
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * 5xx answers the catalogue gives for a transient cause (a restarting sidecar, busy decode
 * memory, start-up or shutdown): retryable, with a wait. `api.error.Internal` is never fine.
 */
export const TRANSIENT_5XX = new Set(Object.values(catalogue).filter((e) => e.httpStatus >= 500 && e.retryable).map((e) => e.messageKey))

export interface Answer {
  status: number
  /** Parsed JSON body, or the text when it is not JSON. */
  body: any
  contentType: string
}

export async function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array | FormData }, timeoutMs = 60_000): Promise<Answer> {
  const response = await fetch(url, { method: init.method ?? 'POST', headers: init.headers, body: init.body as BodyInit | undefined, signal: AbortSignal.timeout(timeoutMs) })
  const text = await response.text()
  let body: unknown = text
  try { body = JSON.parse(text) } catch { /* not JSON */ }
  return { status: response.status, body, contentType: response.headers.get('content-type') ?? '' }
}

/**
 * What is wrong with an answer, or null: spec 2.1's envelope (resCode 0|1, resMsg items with
 * messageKey and recommendedAction), and no 5xx beyond the catalogue's transient ones.
 * A `plain` answer (a file: export, picture, metrics) may succeed outside the envelope.
 */
export function envelopeViolation(answer: Answer, plain = false): string | null {
  const { status, body } = answer
  const failed = typeof body === 'object' && body !== null && body.resCode === 0
  if (status >= 500) {
    const key = failed ? body.resMsg?.[0]?.messageKey : undefined
    if (!TRANSIENT_5XX.has(key)) return `HTTP ${status} ${key ?? JSON.stringify(body).slice(0, 200)}`
  }
  if (plain && status >= 200 && status < 300) return null
  if (typeof body !== 'object' || body === null || (body.resCode !== 0 && body.resCode !== 1)) return `HTTP ${status} without the envelope: ${String(typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 200)}`
  if (!Array.isArray(body.resMsg)) return `HTTP ${status} resMsg is not a list`
  if (body.resCode === 0) {
    if (body.resMsg.length === 0) return `HTTP ${status} failure without a message`
    for (const item of body.resMsg) {
      if (typeof item?.messageKey !== 'string' || typeof item?.recommendedAction !== 'string') return `HTTP ${status} message item without messageKey/recommendedAction: ${JSON.stringify(item)}`
    }
  } else if (status >= 400) return `HTTP ${status} with resCode 1`
  return null
}

/** Resident memory and open descriptors of a live process (from /proc). */
export function sampleProcess(pid: number): { rssBytes: number; fds: number } | null {
  try {
    const rssPages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1])
    return { rssBytes: rssPages * 4096, fds: readdirSync(`/proc/${pid}/fd`).length }
  } catch {
    return null
  }
}

/** Whether `pid` runs (a zombie does not). */
export function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}

/** Live processes whose command line or environment mentions `needle` (the suite's data folders are unique). */
export function processesMentioning(needle: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8')
      if ((cmdline.includes(needle) || environ.includes(needle)) && alive(Number(entry))) found.push(Number(entry))
    } catch { /* gone or not ours */ }
  }
  return found
}

export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, stepMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await sleep(stepMs)
  }
}

/** Parses `30m`, `90s`, `1h`, `500ms` or plain seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim())
  if (!match) throw new Error(`not a duration: ${text}`)
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
  return Number(match[1]) * unit
}
