/**
 * What handlers see of the device's metrics (`ctx.metrics`): the Prometheus text exposition of
 * this runtime's registry. Recording happens in the runtime (`runtime/metrics/`), never in
 * handler bundles: each bundle carries its own copy of shared/, so a metric kept in module
 * scope here would be a different, invisible one per bundle.
 */
export interface MetricsService {
  /** Every metric as Prometheus text, with its content type (`text/plain; version=0.0.4`). */
  render(): Promise<{ contentType: string; body: string }>
}
