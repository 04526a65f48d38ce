/**
 * Face attribute models (converted from TF.js, see models/convert/sources.ts): input
 * preparation and output decoding as pure functions. A face crop arrives as interleaved
 * RGB bytes already resized to the model's square input.
 *
 * - emotion (oarriaga, FER2013 labels): 64 × 64 gray, (gray/255 − 0.5) × 2.
 * - faceres (HSE FaceRes): 224 × 224 RGB 0..255 → gender (sigmoid, > 0.5 male), age
 *   (softmax over 100 one-year bins), 1024-value descriptor.
 * The oarriaga gender model is not converted: on the sample photos it called one of two
 * women a man, where faceres gets both right.
 */

export const emotionLabels = ['angry', 'disgust', 'fear', 'happy', 'sad', 'surprise', 'neutral'] as const
export type Emotion = (typeof emotionLabels)[number]

export const EMOTION_SIZE = 64
export const FACERES_SIZE = 224

/** ITU-R BT.601 luma weights, as the emotion model was trained with. */
const LUMA = [0.2989, 0.587, 0.114] as const

/** RGB crop (64 × 64) → the emotion model's [1, 64, 64, 1] input. */
export function emotionInput(rgb: Uint8Array): { data: Float32Array; dims: number[] } {
  const pixels = EMOTION_SIZE * EMOTION_SIZE
  if (rgb.length !== pixels * 3) throw new RangeError(`expected ${pixels * 3} RGB bytes, got ${rgb.length}`)
  const data = new Float32Array(pixels)
  for (let i = 0; i < pixels; i++) {
    const gray = (LUMA[0] * rgb[i * 3]! + LUMA[1] * rgb[i * 3 + 1]! + LUMA[2] * rgb[i * 3 + 2]!) / 255
    data[i] = (gray - 0.5) * 2
  }
  return { data, dims: [1, EMOTION_SIZE, EMOTION_SIZE, 1] }
}

/** RGB crop (224 × 224) → the faceres model's [1, 224, 224, 3] input, 0..255. */
export function faceresInput(rgb: Uint8Array): { data: Float32Array; dims: number[] } {
  if (rgb.length !== FACERES_SIZE * FACERES_SIZE * 3) throw new RangeError(`expected ${FACERES_SIZE * FACERES_SIZE * 3} RGB bytes, got ${rgb.length}`)
  return { data: Float32Array.from(rgb), dims: [1, FACERES_SIZE, FACERES_SIZE, 3] }
}

/** Emotion probabilities, most likely first. */
export function decodeEmotion(scores: ArrayLike<number>): { label: Emotion; score: number }[] {
  if (scores.length !== emotionLabels.length) throw new RangeError(`expected ${emotionLabels.length} emotion scores, got ${scores.length}`)
  return emotionLabels.map((label, i) => ({ label, score: Number(scores[i]) })).sort((a, b) => b.score - a.score)
}

export interface FaceDescription {
  gender: 'female' | 'male'
  /** How sure the gender is, 0 (coin toss) … 1. */
  genderScore: number
  /** Expected age in years over the model's one-year bins. */
  age: number
  descriptor: Float32Array
}

export const faceresOutputs = { gender: 'gender_pred/Sigmoid', age: 'age_pred/Softmax', descriptor: 'global_pooling/Mean' } as const

export function decodeFaceres(outputs: Record<string, { data: ArrayLike<number> }>): FaceDescription {
  const get = (name: string) => outputs[name]?.data ?? (() => { throw new Error(`faceres: output ${name} is missing`) })()
  const male = Number(get(faceresOutputs.gender)[0])
  const ages = get(faceresOutputs.age)
  let age = 0
  for (let i = 0; i < ages.length; i++) age += i * Number(ages[i])
  return { gender: male > 0.5 ? 'male' : 'female', genderScore: Math.abs(male - 0.5) * 2, age, descriptor: Float32Array.from(get(faceresOutputs.descriptor)) }
}

/** Cosine similarity of two descriptors (1 = same direction). */
export function descriptorSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError('descriptors differ in length')
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0
}
