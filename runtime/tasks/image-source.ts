import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import os from 'node:os'
import { deadline } from '../abort.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import type { Ctx } from '../../shared/handler.ts'
import type { ImageSource } from '../../shared/inference/types.ts'
import { addressGuard, BlockedAddress, type AddressGuard } from './address-guard.ts'

export interface ImageSourceFields {
  uploadId?: string
  imageBase64?: string
  imageUrl?: string
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * spec 4.7: exactly one of `uploadId`, `imageBase64`, `imageUrl`; none or several →
 * api.error.InvalidParam. Returns what the sidecar reads (a staged file path or bytes).
 */
export function pickImageSource(input: ImageSourceFields): 'uploadId' | 'imageBase64' | 'imageUrl' {
  const given = (['uploadId', 'imageBase64', 'imageUrl'] as const).filter((k) => input[k] !== undefined)
  if (given.length !== 1)
    throw invalidParam(given.length === 0 ? '/uploadId' : `/${given[1]}`,
      given.length === 0 ? 'one image source is required: uploadId, imageBase64 or imageUrl' : `exactly one image source may be sent, got ${given.join(', ')}`,
      { sources: given })
  return given[0]!
}

/** spec 4.7: raw Base64 without a `data:image/...` prefix. */
export function decodeBase64Image(value: string): ImageSource {
  if (/^data:/i.test(value)) throw invalidParam('/imageBase64', 'send raw Base64 without a data: prefix')
  const compact = value.replace(/[\r\n]/g, '')
  if (compact.length === 0 || compact.length % 4 !== 0 || !BASE64.test(compact)) throw invalidParam('/imageBase64', 'not valid Base64')
  return { kind: 'bytes', bytes: Buffer.from(compact, 'base64') }
}

/**
 * spec 4.7, 4.11: downloads `imageUrl` with a budget from the free memory (never above
 * `maxEncodedImageBytes`), a timeout, and redirects followed only to http(s). Neither the URL
 * nor a redirect may reach the networks of IMAGE_URL_BLOCKED_NETWORKS (address-guard.ts).
 * Any failure to get the bytes → api.error.ImageDownloadFailed.
 */
export async function downloadImage(url: string, ctx: Pick<Ctx, 'config' | 'signal'>): Promise<ImageSource> {
  let current: URL
  try {
    current = new URL(url)
  } catch {
    throw invalidParam('/imageUrl', 'not a valid URL')
  }
  if (current.protocol !== 'http:' && current.protocol !== 'https:') throw invalidParam('/imageUrl', 'only http and https URLs can be downloaded')
  const failed = (reason: string, extra: Record<string, unknown> = {}) =>
    new ApiError('ImageDownloadFailed', { details: { reason, ...extra } })
  const refused = (host: string, address: string) => failed('the address is not one the device downloads from (IMAGE_URL_BLOCKED_NETWORKS)', { host, address })
  const guard = addressGuard(ctx.config.imageUrlBlockedNetworks)
  const limit = ctx.config.maxEncodedImageBytes
  const budget = Math.min(limit, Math.floor(os.freemem() * ctx.config.imageDownloadMemoryShare))
  const { signal, dispose } = deadline(ctx.config.imageDownloadTimeoutMs, ctx.signal)
  let response: IncomingMessage | null = null
  try {
    for (let hop = 0; ; hop++) {
      // An address written in the URL is not looked up: checked here. A name is checked by the lookup.
      const literal = current.hostname.replace(/^\[|\]$/g, '')
      if (isIP(literal) && guard.blocked(literal)) throw refused(current.hostname, literal)
      response = await get(current, signal, guard.lookup)
      const status = response.statusCode ?? 0
      if (status >= 300 && status < 400 && response.headers.location) {
        response.destroy()
        if (hop >= 3) throw failed('too many redirects')
        const next = new URL(response.headers.location, current)
        if (next.protocol !== 'http:' && next.protocol !== 'https:') throw failed('redirect to a non-HTTP scheme', { scheme: next.protocol })
        current = next
        continue
      }
      if (status !== 200) throw failed('the server did not answer 200', { status })
      const declared = Number(response.headers['content-length'] ?? NaN)
      const tooBig = (bytes: number) => bytes > limit
        ? new ApiError('IMAGE_INPUT_TOO_LARGE', { details: { actualBytes: bytes, limitBytes: limit, resource: 'encoded-image', purpose: 'image' } })
        : failed('the image exceeds the download budget of the free memory', { limitBytes: budget })
      if (declared > budget) throw tooBig(declared)
      const chunks: Buffer[] = []
      let received = 0
      for await (const chunk of response as AsyncIterable<Buffer>) {
        received += chunk.length
        // The declared length may lie: count what arrives.
        if (received > budget) throw tooBig(received)
        chunks.push(chunk)
      }
      return { kind: 'bytes', bytes: Buffer.concat(chunks) }
    }
  } catch (error) {
    if (error instanceof ApiError) throw error
    if (error instanceof BlockedAddress) throw refused(error.host, error.address)
    if (ctx.signal.aborted) throw failed('the request was cancelled')
    throw failed(signal.aborted ? 'timed out' : 'the image could not be downloaded')
  } finally {
    response?.destroy()
    dispose()
  }
}

/** One GET, resolved once the response's headers are in. */
function get(url: URL, signal: AbortSignal, lookup: AddressGuard['lookup']): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).get(url, { signal, lookup, headers: { accept: 'image/*' } }, resolve)
    request.on('error', reject)
  })
}
