import autocannon from 'autocannon'

export interface LoadSettings {
  connections: number
  durationSeconds: number
}

export interface LoadResult {
  requestsPerSecond: number
  /** Mean latency; autocannon's percentiles are whole milliseconds, too coarse for a bare route. */
  latencyMeanMs: number
  latencyP99Ms: number
  requests: number
}

/**
 * One bounded autocannon run against a loopback URL (POST, small JSON body). Throws when any
 * request errored, timed out or answered non-2xx: figures from a failing route are no figures.
 */
export async function loadRoute(url: string, headers: Record<string, string>, body: string, s: LoadSettings): Promise<LoadResult> {
  const r = await autocannon({
    url, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body,
    connections: s.connections, duration: s.durationSeconds, timeout: 10,
  })
  if (r.errors > 0 || r.timeouts > 0 || r.non2xx > 0) {
    throw new Error(`load on ${url}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx of ${r.requests.total}`)
  }
  return { requestsPerSecond: r.requests.average, latencyMeanMs: r.latency.average, latencyP99Ms: r.latency.p99, requests: r.requests.total }
}
