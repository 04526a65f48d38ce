import { ElemType, FloatAttr, OnnxGraphBuilder } from '../../models/convert/onnx-builder.ts'

/** A tiny helmet classifier: mean colour → Gemm → softmax over [helmet, no-helmet]; its bias always says no-helmet. */
export function helmetClassifier(): Uint8Array {
  const g = new OnnxGraphBuilder()
  g.input('image', ElemType.float, [1, 3, 64, 64])
  const [mean] = g.node('ReduceMean', ['image'], { axes: [2, 3], keepdims: 0 })
  const [logits] = g.node('Gemm', [mean!, g.float('w', [0, 0, 0, 0, 0, 0], [3, 2]), g.float('b', [0, 6])], { alpha: new FloatAttr(1) })
  g.node('Softmax', [logits!], { axis: 1 }, ['scores'])
  g.output('scores', ElemType.float)
  return g.encode('helmet', 'test helmet classifier')
}
