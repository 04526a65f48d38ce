import { lookup } from 'node:dns/promises'
import { connect } from 'node:net'
import type { ConnectivityCheck, QualityTarget } from '../../shared/network/schemas.ts'
import type { CheckResult, QualityResult } from '../../shared/network/types.ts'

/**
 * Network quality and connectivity probes (spec 4.10 Network). Every probe ends within its
 * timeout; only the operator's stored targets are probed (the service picks them).
 */

const elapsedMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const round = (ms: number) => Math.round(ms * 100) / 100
const message = (error: unknown) => (error as { code?: string }).code ?? (error as Error).message

/** One timed TCP handshake; resolves the round trip in ms or rejects with the failure. */
export function tcpConnectMs(host: string, port: number, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint()
    const socket = connect({ host, port })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }))
    }, timeoutMs)
    socket.once('connect', () => {
      const ms = elapsedMs(start)
      clearTimeout(timer)
      socket.destroy()
      resolve(ms)
    })
    socket.once('error', (error) => {
      clearTimeout(timer)
      socket.destroy()
      reject(error)
    })
  })
}

/** Bounded by timeoutMs, whatever the promise does (getaddrinfo itself cannot be cancelled). */
function within<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const SAMPLE_GAP_MS = 100

export async function measureQuality(target: QualityTarget, samples: number, timeoutMs: number): Promise<QualityResult> {
  const rtts: number[] = []
  let lastError: string | null = null
  for (let i = 0; i < samples; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, SAMPLE_GAP_MS))
    try {
      rtts.push(await tcpConnectMs(target.host, target.port, timeoutMs))
    } catch (error) {
      lastError = message(error)
    }
  }
  const jitter = rtts.length < 2 ? null : rtts.slice(1).reduce((sum, rtt, i) => sum + Math.abs(rtt - rtts[i]!), 0) / (rtts.length - 1)
  return {
    name: target.name,
    host: target.host,
    port: target.port,
    method: 'tcp-connect',
    sent: samples,
    received: rtts.length,
    lossPercent: round(((samples - rtts.length) / samples) * 100),
    latencyMs: rtts.length === 0 ? null : {
      min: round(Math.min(...rtts)), avg: round(rtts.reduce((a, b) => a + b, 0) / rtts.length), max: round(Math.max(...rtts)),
    },
    jitterMs: jitter === null ? null : round(jitter),
    lastError,
  }
}

export async function runCheck(check: ConnectivityCheck, timeoutMs: number): Promise<CheckResult> {
  const start = process.hrtime.bigint()
  const base = { name: check.name, type: check.type }
  const done = (fields: Partial<CheckResult> & { ok: boolean; target: string }): CheckResult =>
    ({ ...base, timeMs: round(elapsedMs(start)), error: null, ...fields })
  if (check.type === 'tcp') {
    const target = `${check.host}:${check.port}`
    try {
      await tcpConnectMs(check.host, check.port, timeoutMs)
      return done({ ok: true, target })
    } catch (error) {
      return done({ ok: false, target, error: message(error) })
    }
  }
  if (check.type === 'http') {
    try {
      // A redirect counts as an answer: the check is reachability, not the page behind it.
      const response = await fetch(check.url, { method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) })
      await response.body?.cancel()
      return done({ ok: response.status < 400, target: check.url, status: response.status, error: response.status < 400 ? null : `HTTP ${response.status}` })
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? 'ETIMEDOUT' : message((error as Error).cause ?? error)
      return done({ ok: false, target: check.url, error: reason })
    }
  }
  try {
    const found = await within(lookup(check.hostname, { all: true }), timeoutMs)
    return done({ ok: found.length > 0, target: check.hostname, addresses: found.map((a) => a.address) })
  } catch (error) {
    return done({ ok: false, target: check.hostname, addresses: [], error: message(error) })
  }
}
