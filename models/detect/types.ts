/** Shapes shared by the detector decoders: plain data, no runtime dependency. */

/** One model output as a flat array with its dims (what onnxruntime returns). */
export interface OutputTensor {
  dims: readonly number[]
  data: ArrayLike<number>
}

/** A box in coordinates normalized to the image (0..1), corners x1,y1 (top-left) and x2,y2. */
export interface Box {
  x1: number
  y1: number
  x2: number
  y2: number
}

export interface Detection {
  classId: number
  label: string
  score: number
  box: Box
}

export interface DecodeOptions {
  /** Candidates below this score are dropped before NMS. */
  minScore: number
  /** Two boxes of the same class overlapping more than this (IoU) keep only the higher score. */
  iouThreshold: number
  /** At most this many detections, highest scores first. */
  maxDetections: number
  /** Keep only these class ids (e.g. [0] for persons); all classes when absent. */
  classes?: readonly number[]
}

/** How a detector wants its input: a square RGB image resized (stretched) to size × size. */
export interface InputSpec {
  size: number
  layout: 'nchw' | 'nhwc'
  /** Pixel value multiplier (1/255 for 0..1 inputs). */
  scale: number
}
