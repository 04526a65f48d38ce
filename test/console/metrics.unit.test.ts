import { describe, expect, it } from 'vitest'
import { parsePrometheus } from '../../runtime/console/metrics-history.ts'

describe('console metrics reading (README "Metrics")', () => {
  it('parses the text exposition format: names, escaped labels, values; comments skipped', () => {
    const text = [
      '# HELP http_requests_total Requests answered.',
      '# TYPE http_requests_total counter',
      'http_requests_total{route="/gtw/cwai/algorithm/page",method="POST",status="200"} 12',
      'inference_duration_seconds_sum{algorithm="face-detection",outcome="ok"} 0.25 1767225600000',
      'odd_label{text="a \\"quoted\\" \\\\ b\\nc"} 1',
      'process_resident_memory_bytes 104857600',
      'nodejs_eventloop_lag_seconds NaN',
      '',
    ].join('\n')
    expect(parsePrometheus(text)).toEqual([
      { name: 'http_requests_total', labels: { route: '/gtw/cwai/algorithm/page', method: 'POST', status: '200' }, value: 12 },
      { name: 'inference_duration_seconds_sum', labels: { algorithm: 'face-detection', outcome: 'ok' }, value: 0.25 },
      { name: 'odd_label', labels: { text: 'a "quoted" \\ b\nc' }, value: 1 },
      { name: 'process_resident_memory_bytes', labels: {}, value: 104857600 },
    ])
  })
})
