/**
 * Turns onnxruntime's telemetry off for this process before its first session. Left on,
 * onnxruntime-node (1.30 on Linux) reads the machine id and leaves an empty
 * `/tmp/mat-debug-<pid>.log` for every process that opens a session: one per sidecar start,
 * piling up on a device that runs for years. onnxruntime reads the variable when it creates
 * its environment, at the first session, so setting it here is early enough; an operator who
 * sets it explicitly is left alone (docs/deployment.md, "What the device writes").
 */
export function ortTelemetryOff(): void {
  process.env.ORT_DISABLE_TELEMETRY ??= '1'
}
