import { ApiError } from '../../shared/errors/index.ts'
import type { SourceType } from '../../shared/cameras/types.ts'
import { splitCredentials, type SplitUrl } from '../url-credentials.ts'

/** URL schemes per source type: nothing else reaches ffmpeg (no file:, concat:, subfile: ...). */
export const URL_SCHEMES: Partial<Record<SourceType, string[]>> = {
  rtsp: ['rtsp:', 'rtsps:'],
  http: ['http:', 'https:'],
}
export const USB_DEVICE = /^\/dev\/video\d{1,3}$/
const MAX_URL_LENGTH = 2048

const invalid = (field: string, reason: string) =>
  new ApiError('CameraUrlInvalid', { details: { field, reason }, msgText: `${field}: ${reason}` })

/**
 * Checks a source URL and splits it into the URL without user info and the credentials in
 * it (credentials given in their own fields win). Throws CameraUrlInvalid.
 */
export function parseSourceUrl(sourceType: SourceType, raw: string): SplitUrl {
  const schemes = URL_SCHEMES[sourceType]
  if (!schemes) throw invalid('url', `a ${sourceType} camera has no URL`)
  // eslint-disable-next-line no-control-regex
  if (raw.length > MAX_URL_LENGTH || /[\s\x00-\x1f\x7f]/.test(raw)) throw invalid('url', 'contains white space or control characters, or is too long')
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw invalid('url', 'is not an absolute URL')
  }
  if (!schemes.includes(parsed.protocol)) throw invalid('url', `must start with ${schemes.map((s) => `${s}//`).join(' or ')}`)
  if (!parsed.hostname) throw invalid('url', 'has no host')
  return splitCredentials(parsed)
}

/** The URL with its credentials, for the reader only (never logged, never returned). */
export function urlWithCredentials(url: string, username: string | null, password: string | null): string {
  if (!username && !password) return url
  const parsed = new URL(url)
  parsed.username = encodeURIComponent(username ?? '')
  if (password) parsed.password = encodeURIComponent(password)
  return parsed.toString()
}

/** The URL as clients see it: the user name, and `***` for a password. */
export function redactedUrl(url: string, username: string | null, password: string | null): string {
  if (!username && !password) return url
  const parsed = new URL(url)
  parsed.username = encodeURIComponent(username ?? '')
  if (password) parsed.password = '***'
  return parsed.toString()
}

/** Removes credentials from free text (ffmpeg's messages quote the URL they opened). */
export function redactText(text: string, password: string | null): string {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/@'"]*?:)[^\s/@'"]*@/gi, '$1***@')
  if (password) {
    for (const form of new Set([password, encodeURIComponent(password)])) out = out.split(form).join('***')
  }
  return out
}
