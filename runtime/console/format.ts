/** A device timestamp (milliseconds, as a number or a digit string, spec 8) in the browser's local time. */
export function localTime(value: unknown): string {
  const ms = Number(value)
  if (value === null || value === undefined || value === '' || !Number.isFinite(ms)) return '-'
  return new Date(ms).toLocaleString()
}
