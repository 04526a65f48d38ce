import type { RgbImage } from './rgb-image.ts'

/**
 * The image a pipeline runs on (docs/detection.md "Decoding at the model's size"): its size,
 * its full pixels (decoded once, when first wanted) and, for a JPEG, the same image decoded
 * straight at a detector's input size (libjpeg shrink-on-load). A detector reads the scaled
 * image where there is one of its input's size; crops, recognizers and the overlay read the
 * full pixels.
 */
export interface PipelineImage {
  width: number
  height: number
  full(): Promise<RgbImage>
  /** The image at `width` × `height`, or null when it is not decoded at that size. */
  scaled(width: number, height: number): Promise<RgbImage> | null
}

/** Already decoded pixels (raw stream frames, BMP, PNG, or shrink-on-load off). */
export function decodedImage(image: RgbImage): PipelineImage {
  const full = Promise.resolve(image)
  return { width: image.width, height: image.height, full: () => full, scaled: () => null }
}

/** True for an already decoded RgbImage (it carries its pixels). */
export function isRgbImage(image: RgbImage | PipelineImage): image is RgbImage {
  return 'data' in image
}
