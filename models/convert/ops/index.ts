/** The table of TF op → ONNX mapping. An op missing here is a conversion error. */
import type { OpMapping } from '../context.ts'
import { activationOps } from './activation.ts'
import { convOps } from './conv.ts'
import { elementwiseOps } from './elementwise.ts'
import { imageOps } from './image.ts'
import { matmulOps } from './matmul.ts'
import { miscOps } from './misc.ts'
import { poolOps } from './pool.ts'
import { reduceOps } from './reduce.ts'
import { shapeOps } from './shape.ts'

export const opMappings: Readonly<Record<string, OpMapping>> = {
  ...activationOps,
  ...convOps,
  ...elementwiseOps,
  ...imageOps,
  ...matmulOps,
  ...miscOps,
  ...poolOps,
  ...reduceOps,
  ...shapeOps,
}
