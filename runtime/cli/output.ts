import { DeviceError, NetworkError } from '../client/errors.ts'
import { allTargets, type DetectionResult } from '../client/types.ts'
import { BrokerError, UsageError } from './exit-codes.ts'

/** A short fixed-width table (no colours, so it pipes cleanly). */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))]
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)))
  const line = (r: string[]) => r.map((c, i) => (c ?? '').padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(cells[0]!), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join('\n')
}

export function detectionTable(result: DetectionResult): string {
  const targets = allTargets(result)
  const rows = targets.map((t, i) => {
    const best = [...(t.confidence ?? [])].sort((a, b) => b.confidence - a.confidence)[0]
    return [i + 1, best?.label ?? '-', best ? best.confidence.toFixed(3) : '-', Math.round(t.box.x), Math.round(t.box.y), Math.round(t.box.width), Math.round(t.box.height), t.landmark?.length ?? 0]
  })
  const head = `algorithm ${result.algorithmCode} · ${targets.length} target(s) in ${result.areaList.length} area(s)`
  return targets.length ? `${head}\n${table(['#', 'label', 'confidence', 'x', 'y', 'width', 'height', 'landmarks'], rows)}` : head
}

/** An error as spec 7.2 asks clients to show it: key, text, actual value, limit, action, wait. */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof DeviceError) {
    const item = error.item
    if (!item) {
      return {
        kind: 'device', route: error.route, httpStatus: error.status,
        // spec 7.1: a bare 413 is explained by request type.
        ...(error.status === 413 ? { recommendedAction: error.route.endsWith('/uploadTemp') ? 'USE_CHUNKED_UPLOAD' : 'REDUCE_REQUEST_BODY' } : {}),
        body: error.rawBody?.slice(0, 500) ?? null,
      }
    }
    return {
      kind: 'device', route: error.route, httpStatus: error.status,
      messageKey: item.messageKey, msgCode: item.msgCode, msgText: item.msgText,
      details: item.details, retryable: item.retryable, recommendedAction: item.recommendedAction,
      ...(item.retryAfterSeconds !== undefined ? { retryAfterSeconds: item.retryAfterSeconds } : {}),
    }
  }
  if (error instanceof NetworkError) return { kind: 'network', route: error.route, message: error.message }
  if (error instanceof BrokerError) return { kind: 'network', message: error.message }
  if (error instanceof UsageError) return { kind: 'usage', message: error.message }
  return { kind: 'failure', message: (error as Error)?.message ?? String(error) }
}

export function errorText(error: unknown): string {
  const d = describeError(error)
  if (d.kind !== 'device') return `${d.kind} error: ${d.message}`
  const details = (d.details ?? {}) as Record<string, unknown>
  const lines = [`device error (HTTP ${d.httpStatus}) on ${d.route}: ${d.messageKey ?? 'no envelope'}${d.msgText ? ` — ${d.msgText}` : ''}`]
  const actual = details.actualBytes ?? details.actual
  const limit = details.limitBytes ?? details.limit
  if (actual !== undefined) lines.push(`  actual: ${actual}`)
  if (limit !== undefined) lines.push(`  limit: ${limit}`)
  const rest = Object.entries(details).filter(([k]) => !['actualBytes', 'actual', 'limitBytes', 'limit'].includes(k))
  if (rest.length) lines.push(`  details: ${JSON.stringify(Object.fromEntries(rest))}`)
  if (d.recommendedAction) lines.push(`  action: ${d.recommendedAction}`)
  if (d.retryAfterSeconds !== undefined) lines.push(`  retry after: ${d.retryAfterSeconds} s`)
  return lines.join('\n')
}
