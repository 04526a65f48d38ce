import type { GalleryMeasure } from '../../shared/db/schema/galleries.ts'

/**
 * The length R of a face descriptor of the shipped model (dlib ResNet-29, raw): its norms on
 * shared/media/faces are 1.32–1.57, median 1.49 (docs/galleries.md "Measure").
 */
export const EUCLIDEAN_SCALE = 1.5

/**
 * The `similarity` a gallery reports for a pair (docs/galleries.md "Measure"), higher is
 * closer, one scale for every threshold of the API (`taskConfig.recognition.threshold`,
 * `thresholds.<node>`, `SearchByImage.threshold`):
 *  - cosine: 1 − cosine distance (the cosine of the two descriptors);
 *  - euclidean: 1 − d² / (2 R²), d the Euclidean distance of the raw descriptors: monotone in
 *    d (it ranks and thresholds as dlib's distance does) and equal to the cosine when both
 *    descriptors are R long, so a threshold set on the former cosine scale keeps about its
 *    meaning. dlib's own threshold, d = 0.6, is 0.92.
 */
export function similarityOfDistance(measure: GalleryMeasure, distance: number): number {
  return measure === 'euclidean' ? 1 - (distance * distance) / (2 * EUCLIDEAN_SCALE * EUCLIDEAN_SCALE) : 1 - distance
}
