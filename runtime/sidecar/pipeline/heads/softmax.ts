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
