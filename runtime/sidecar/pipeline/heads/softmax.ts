import { headOutput, type ClassifierHead, type HeadContext, type HeadOptions } from './types.ts'

/** Best class of a probability (or logit) vector, with softmax applied when the values are logits. */
export function bestClass(values: Float32Array, labels: string[]): { label: string; confidence: number } {
  let sum = 0, isProb = true
  for (const v of values) { sum += v; if (v < 0 || v > 1) isProb = false }
  const probs = isProb && Math.abs(sum - 1) < 1e-3 ? Array.from(values) : softmax(values)
  let best = 0
  for (let i = 1; i < probs.length; i++) if (probs[i]! > probs[best]!) best = i
  return { label: labels[best] ?? String(best), confidence: probs[best]! }
}

function softmax(values: Float32Array): number[] {
  const max = Math.max(...values)
  const exps = Array.from(values, (v) => Math.exp(v - max))
  const total = exps.reduce((s, v) => s + v, 0)
  return exps.map((v) => v / total)
}

/** The `softmax` head: the best label (effect `label`), or a turned crop when it is `whenLabel`. */
export function createSoftmaxHead({ node, head }: HeadContext<HeadOptions<'softmax'>>): ClassifierHead {
  return (outputs, threshold) => {
    const best = bestClass(headOutput(outputs, head.output, node.id).data as Float32Array, head.labels)
    if (best.confidence < threshold) return { labels: [] }
    if (head.effect === 'label') return { labels: [best] }
    return { labels: [], rotate: best.label === head.whenLabel }
  }
}
