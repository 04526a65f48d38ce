import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Webhook signature (docs/events.md "Webhook"): header `X-Event-Signature: sha256=<hex>` where hex is
 * HMAC-SHA256(secret, `${timestamp}.${body}`), and header `X-Event-Timestamp: <unix seconds>`.
 * Signing the timestamp with the body lets receivers refuse replays of old deliveries.
 */
export const SIGNATURE_HEADER = 'x-event-signature'
export const TIMESTAMP_HEADER = 'x-event-timestamp'
export const EVENT_ID_HEADER = 'x-event-id'

export function signWebhook(secret: string, timestamp: number, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')
}

export function verifyWebhook(secret: string, timestamp: string | number, body: string, signature: string): boolean {
  const expected = Buffer.from(signWebhook(secret, Number(timestamp), body))
  const given = Buffer.from(signature)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
