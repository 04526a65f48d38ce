import { defineHandler } from '../../shared/handler.ts'
import { AddAudioFileInput } from '../../shared/audio/schemas.ts'

export default defineHandler({
  routes: ['/gtw/cwai/Audio/AddAudioFile'],
  auth: 'session',
  body: 'json',
  summary: 'Adds an audio file from a completed upload with purpose `audio` (spec 4.10 Audio, 4.12): checked with ffmpeg (WAV, MP3, Ogg, FLAC, AAC/M4A; at most AUDIO_MAX_DURATION_MS), loudness-normalized to -16 LUFS and stored as MP3. Answers the file; AudioFileInvalid, AudioFileTooLong (the upload stays usable).',
  input: AddAudioFileInput,
  handle(input, ctx) {
    return ctx.audio.addFile(input, ctx.identity!)
  },
})
