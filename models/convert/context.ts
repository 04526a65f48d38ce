/**
 * What an op mapping sees of the conversion: its TF node, its inputs (as ONNX value names or
 * as constants known at conversion time) and a way to emit ONNX nodes.
 */
import type { AttrValue, OnnxGraphBuilder } from './onnx-builder.ts'
import type { ConstTensor, TfAttr, TfNode } from './tfjs-graph.ts'

/** A conversion that cannot go on: names the model, the node and the TF op. */
export class ConversionError extends Error {
  constructor(
    readonly model: string,
    readonly node: string,
    readonly op: string,
    reason: string,
  ) {
    super(`model "${model}": node "${node}" (TF op ${op}): ${reason}`)
    this.name = 'ConversionError'
  }
}

export interface OpContext {
  readonly model: string
  readonly node: TfNode
  readonly b: OnnxGraphBuilder
  /** Number of data inputs (control inputs `^x` excluded). */
  readonly inputCount: number
  /** ONNX value name of data input `i` (a constant input becomes an initializer). */
  input(i: number): string
  /** The value of data input `i` when known at conversion time. */
  constant(i: number): ConstTensor | undefined
  /** The value of data input `i`, which this mapping needs at conversion time. */
  requireConst(i: number, what: string): ConstTensor
  attr(name: string): TfAttr | undefined
  emit(opType: string, inputs: string[], attrs?: Record<string, AttrValue>, outputs?: number): string[]
  fail(reason: string): never
}

/** Maps one TF op: returns the ONNX value name of each TF output, by index. */
export type OpMapping = (ctx: OpContext) => string[]
