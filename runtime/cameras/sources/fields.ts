import { ApiError } from '../../../shared/errors/index.ts'
import { parseSourceUrl } from '../url.ts'
import type { SourceType } from '../../../shared/cameras/types.ts'
import type { SourceFields, SourceInput, StoredSource } from './types.ts'

export const invalid = (field: string, reason: string) =>
  new ApiError('CameraUrlInvalid', { details: { field, reason }, msgText: `${field}: ${reason}` })

export const refuse = (sourceType: SourceType, field: string): never => { throw invalid(field, `a ${sourceType} camera does not take ${field}`) }

/** Credentials: the fields (an empty password removes it), else the `stored` ones; no URL, no device. */
export function baseFields(input: SourceInput, stored: StoredSource): SourceFields {
  return { url: null, username: input.username || stored.username, password: input.password === '' ? null : input.password || stored.password, device: null }
}

/** A URL source: `url` required and checked; credentials from the fields, else those in the URL (split off it), else `stored`. */
export function urlFields(sourceType: SourceType, input: SourceInput, stored: StoredSource): SourceFields {
  const source = baseFields(input, stored)
  if (!input.url) throw invalid('url', `a ${sourceType} camera needs url`)
  if (input.uploadId !== undefined) refuse(sourceType, 'uploadId')
  const parsed = parseSourceUrl(sourceType, input.url)
  source.url = parsed.url
  source.username = input.username || parsed.username || stored.username
  source.password = input.password === '' ? null : input.password || parsed.password || stored.password
  return source
}
