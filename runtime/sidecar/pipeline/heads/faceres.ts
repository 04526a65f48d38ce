import type * as ort from 'onnxruntime-node'
import { decodeFaceres, faceresOutputs } from '../../../../models/face/attributes.ts'
import type { FaceresHead } from '../../../../models/manifest-schema.ts'
import type { ConfidenceItem } from '../../../../shared/inference/types.ts'
import type { ClassifierHead, HeadContext } from './types.ts'

/** Years either side of the expected age whose probability mass is the age label's confidence. */
const AGE_SPAN = 5

/**
 * FaceRes outputs → labels for `confidence[]` (`male`/`female` with the sigmoid's
 * probability of that gender; `age:<years>` with the probability mass within ±5 years)
 * and the descriptor's first values as `featurePreview` (spec 2.6).
 */
export function decodeFaceHead(outputs: Record<string, ort.Tensor>, head: FaceresHead): { labels: ConfidenceItem[]; featurePreview: number[] } {
  const pick = (name: string) => outputs[name] ?? (() => { throw new Error(`faceres head: model output ${name} is missing`) })()
  // decodeFaceres reads the outputs under the converted model's names (faceresOutputs).
  const byName = { [faceresOutputs.gender]: pick(head.genderOutput), [faceresOutputs.age]: pick(head.ageOutput), [faceresOutputs.descriptor]: pick(head.descriptorOutput) }
  const face = decodeFaceres(byName as Record<string, { data: ArrayLike<number> }>)
  const male = Number((outputs[head.genderOutput]!.data as Float32Array)[0])
  const ages = outputs[head.ageOutput]!.data as Float32Array
  const age = Math.round(face.age)
  let mass = 0
  for (let i = Math.max(0, age - AGE_SPAN); i <= Math.min(ages.length - 1, age + AGE_SPAN); i++) mass += ages[i]!
  return {
    labels: [
      { label: face.gender, confidence: face.gender === 'male' ? male : 1 - male },
      { label: `age:${age}`, confidence: mass },
    ],
    featurePreview: Array.from(face.descriptor.subarray(0, head.previewLength)),
  }
}

/** The `faceres` head: gender and age labels at or above the threshold, and the descriptor preview. */
export function createFaceresHead({ head }: HeadContext<FaceresHead>): ClassifierHead {
  return (outputs, threshold) => {
    const face = decodeFaceHead(outputs, head)
    return { labels: face.labels.filter((item) => item.confidence >= threshold), featurePreview: face.featurePreview }
  }
}
