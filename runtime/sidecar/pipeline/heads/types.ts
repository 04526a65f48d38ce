import type * as ort from 'onnxruntime-node'
import type { ClassifierNode } from '../../../../models/manifest-schema.ts'
import type { ConfidenceItem } from '../../../../shared/inference/types.ts'

/** What a classifier head makes of one crop's outputs: labels to add, a preview, a turned crop. */
export interface HeadResult {
  /** Labels at or above the threshold, added to the target's `confidence[]`. */
  labels: ConfidenceItem[]
  /** spec 2.6: first values of a feature vector (debug preview). */
  featurePreview?: number[]
  /** The crop is upside down: later nodes read it turned by 180°. */
  rotate?: boolean
}

/** A head ready to run: the outputs of one crop and the threshold in force. */
export type ClassifierHead = (outputs: Record<string, ort.Tensor>, threshold: number) => HeadResult

/** What a head plugin is built from: its node, its manifest `head`, and the node's key file (ctc). */
export interface HeadContext<H> {
  node: ClassifierNode
  head: H
  keyPath: string | undefined
}

/** The tensor a single-output head reads: `head.output`, or the model's first output. */
export function headOutput(outputs: Record<string, ort.Tensor>, output: string | undefined, nodeId: string): ort.Tensor {
  const tensor = (output ? outputs[output] : Object.values(outputs)[0]) as ort.Tensor | undefined
  if (!tensor) throw new Error(`classifier ${nodeId}: output missing`)
  return tensor
}

/** The manifest `head` options of one kind. */
export type HeadOptions<K extends ClassifierNode['head']['kind']> = Extract<ClassifierNode['head'], { kind: K }>
