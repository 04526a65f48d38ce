import type { ClassifierNode } from '../../../../models/manifest-schema.ts'
import { createCtcHead } from './ctc.ts'
import { createFaceresHead } from './faceres.ts'
import { createSoftmaxHead } from './softmax.ts'
import type { ClassifierHead, HeadContext, HeadOptions } from './types.ts'

type Head = ClassifierNode['head']

/** The head table: a manifest's `head.kind` picks the entry (one file per head in this folder). */
const headPlugins: { [K in Head['kind']]: (context: HeadContext<HeadOptions<K>>) => ClassifierHead } = {
  softmax: createSoftmaxHead,
  ctc: createCtcHead,
  faceres: createFaceresHead,
}

/** The head of a classifier node; `keyPath` is the node's key file where its head has one. */
export function createHead(node: ClassifierNode, keyPath: string | undefined): ClassifierHead {
  const create = headPlugins[node.head.kind] as (context: HeadContext<Head>) => ClassifierHead
  return create({ node, head: node.head, keyPath })
}
