/**
 * The supervisor's check that a new version on probation answers requests: `Probe` (spec 4.9,
 * the one route without `mtk`) on the port the device announced, asked until it answers
 * `resCode 1` with `alive: true` or `signal` aborts (probation over).
 */
export async function probeAnswers(host: string, port: number, signal: AbortSignal): Promise<boolean> {
  // A wildcard bind answers on loopback.
  const target = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host
  const url = `http://${target}:${port}/v1/cwai/aihost/Probe`
  while (!signal.aborted) {
    try {
      const response = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(2_000)]) })
      const body = await response.json() as { resCode?: number; resData?: { alive?: boolean } }
      if (response.ok && body.resCode === 1 && body.resData?.alive === true) return true
    } catch {
      // not answering yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return false
}
