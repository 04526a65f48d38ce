import { Type, type Static } from '@sinclair/typebox'
import { PageNumber, PageSize } from '../http/paging.ts'

/** Request schemas of the Audio routes (spec 4.10 Audio; docs/audio.md "Audio"). */
export const AudioId = Type.String({ minLength: 1, maxLength: 64, description: 'The id AddAudioFile answered.' })
export const ColumnId = Type.String({ minLength: 1, maxLength: 64, description: 'The id AddAudioColumn answered.' })
const Name = Type.String({ minLength: 1, maxLength: 128 })

export const AddAudioFileInput = Type.Object({
  uploadId: Type.String({ minLength: 1, maxLength: 200, description: 'A completed upload with purpose `audio` (spec 4.12).' }),
  audioName: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Default: the uploaded file name.' })),
}, { additionalProperties: false })

export const AudioFilePageInput = Type.Object({
  pageNum: PageNumber(),
  pageSize: PageSize(20, 500),
  audioName: Type.Optional(Type.String({ maxLength: 128, description: 'Substring of the name.' })),
}, { additionalProperties: false })

const ColumnFields = {
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http:// or https:// URL the audio is pushed to (e.g. an Axis speaker\'s /axis-cgi/audio/transmit.cgi with format mulaw). Credentials may be in the URL or in username/password.' }),
  method: Type.Union([Type.Literal('POST'), Type.Literal('PUT')], { description: 'HTTP method of the push (default POST).' }),
  format: Type.Union([Type.Literal('mp3'), Type.Literal('wav'), Type.Literal('mulaw')], { description: 'What the column is sent: mp3 (audio/mpeg, the stored file), wav (audio/wav, 16-bit PCM) or mulaw (audio/basic, G.711 µ-law 8 kHz mono). Default mp3.' }),
  username: Type.String({ maxLength: 256, description: 'HTTP Basic or Digest user name.' }),
  password: Type.String({ maxLength: 256, description: 'Stored for the device to push; never returned, never logged.' }),
  timeoutMs: Type.Integer({ minimum: 500, maximum: 60_000, description: 'Connect and answer timeout; a push may take the file\'s duration longer (a column that plays as it receives). Default 10000.' }),
}

export const AddAudioColumnInput = Type.Object({
  columnName: Name,
  protocol: Type.Optional(Type.Literal('http-push', { description: 'The only protocol: HTTP push of the whole file (docs/audio.md "Audio").' })),
  url: ColumnFields.url,
  method: Type.Optional(ColumnFields.method),
  format: Type.Optional(ColumnFields.format),
  username: Type.Optional(ColumnFields.username),
  password: Type.Optional(ColumnFields.password),
  timeoutMs: Type.Optional(ColumnFields.timeoutMs),
}, { additionalProperties: false })
export type AddAudioColumnInput = Static<typeof AddAudioColumnInput>

export const UpdateAudioColumnInput = Type.Object({
  columnId: ColumnId,
  columnName: Type.Optional(Name),
  url: Type.Optional(ColumnFields.url),
  method: Type.Optional(ColumnFields.method),
  format: Type.Optional(ColumnFields.format),
  username: Type.Optional(ColumnFields.username),
  password: Type.Optional(Type.String({ maxLength: 256, description: 'Omitted: unchanged; empty string: removed.' })),
  timeoutMs: Type.Optional(ColumnFields.timeoutMs),
}, { additionalProperties: false })
export type UpdateAudioColumnInput = Static<typeof UpdateAudioColumnInput>

export const AudioColumnPageInput = Type.Object({ pageNum: PageNumber(), pageSize: PageSize(20, 500) }, { additionalProperties: false })
