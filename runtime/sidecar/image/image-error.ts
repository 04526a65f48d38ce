/**
 * An image the sidecar refuses; `errorId` is a catalogue id (shared/errors/catalogue.ts) so
 * the runtime re-throws it as the matching ApiError with these details (spec 7.1).
 */
export type ImageErrorId = 'ImageDecodeFailed' | 'IMAGE_INPUT_TOO_LARGE' | 'IMAGE_RESOLUTION_TOO_LARGE'

export class ImageError extends Error {
  constructor(readonly errorId: ImageErrorId, message: string, readonly details: Record<string, unknown> = {}) {
    super(message)
    this.name = 'ImageError'
  }
}
