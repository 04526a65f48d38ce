// autocannon ships no types; the subset bench/lib/http-load.ts uses.
declare module 'autocannon' {
  interface Options {
    url: string
    method?: string
    headers?: Record<string, string>
    body?: string
    connections?: number
    duration?: number
    amount?: number
    timeout?: number
  }
  interface Histogram { average: number; p99: number; total: number }
  interface Result {
    errors: number
    timeouts: number
    non2xx: number
    requests: Histogram
    latency: Histogram
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
