import { readFileSync } from 'node:fs'
import { headOutput, type ClassifierHead, type HeadContext, type HeadOptions } from './types.ts'

/**
 * Greedy CTC decoding (PaddleOCR CTCLabelDecode): best class per time step, repeats merged,
 * blanks dropped; confidence is the mean probability of the kept steps. The key list is
 * one character per line; index `blankIndex` is the blank and a space may follow the keys.
 */
export function loadCtcKeys(file: string, blankIndex: number, appendSpace: boolean): string[] {
  const keys = readFileSync(file, 'utf8').split(/\r?\n/)
  if (keys[keys.length - 1] === '') keys.pop()
  const table = [...keys]
  table.splice(blankIndex, 0, '')
  if (appendSpace) table.push(' ')
  return table
}

export function ctcDecode(probs: Float32Array, steps: number, classes: number, table: string[], blankIndex: number) {
  let text = ''
  let sum = 0, kept = 0, previous = -1
  for (let t = 0; t < steps; t++) {
    let best = 0, bestP = -Infinity
    const row = t * classes
    for (let c = 0; c < classes; c++) if (probs[row + c]! > bestP) { bestP = probs[row + c]!; best = c }
    if (best !== blankIndex && best !== previous) { text += table[best] ?? ''; sum += bestP; kept++ }
    previous = best
  }
  return { text: text.trim(), confidence: kept > 0 ? sum / kept : 0 }
}

/** The `ctc` head: the decoded text as a label (none when empty or below the threshold). */
export function createCtcHead({ node, head, keyPath }: HeadContext<HeadOptions<'ctc'>>): ClassifierHead {
  const keys = loadCtcKeys(keyPath!, head.blankIndex, head.appendSpace)
  return (outputs, threshold) => {
    const tensor = headOutput(outputs, head.output, node.id)
    const [, steps, classes] = tensor.dims as [number, number, number]
    const { text, confidence } = ctcDecode(tensor.data as Float32Array, steps, classes, keys, head.blankIndex)
    return { labels: text && confidence >= threshold ? [{ label: text, confidence }] : [] }
  }
}
