/** Image ops: resize keeps NHWC (sizes built from the runtime N and C); DepthToSpace is channels-first. */
import { attrInt } from '../tfjs-graph.ts'
import { channelsFirst } from '../layout.ts'
import type { OpContext, OpMapping } from '../context.ts'
import type { AttrValue } from '../onnx-builder.ts'

/** TF's align_corners / half_pixel_centers → ONNX coordinate_transformation_mode. */
function coordinateMode(ctx: OpContext, halfPixel: string): string {
  if (ctx.attr('align_corners')?.b) return 'align_corners'
  return ctx.attr('half_pixel_centers')?.b ? halfPixel : 'asymmetric'
}

const resize = (mode: 'linear' | 'nearest', halfPixel: string, extra: Record<string, string> = {}): OpMapping => (ctx) => {
  const size = Array.from(ctx.requireConst(1, 'size').data)
  const x = ctx.input(0)
  const [n] = ctx.emit('Shape', [x], { start: 0, end: 1 })
  const [c] = ctx.emit('Shape', [x], { start: 3, end: 4 })
  const [sizes] = ctx.emit('Concat', [n!, ctx.b.int64(`${ctx.node.name}/hw`, size), c!], { axis: 0 })
  return ctx.emit('Resize', [x, '', '', sizes!], { mode, coordinate_transformation_mode: coordinateMode(ctx, halfPixel), ...extra })
}

const depthSpace = (onnxOp: string): OpMapping => (ctx) => {
  const blocksize = attrInt(ctx.attr('block_size'))!
  // TF's NHWC channel order (i·bs + j)·C' + c is ONNX's DCR order
  const attrs: Record<string, AttrValue> = onnxOp === 'DepthToSpace' ? { blocksize, mode: 'DCR' } : { blocksize }
  return [channelsFirst(ctx, ctx.input(0), (x) => ctx.emit(onnxOp, [x], attrs)[0]!)]
}

export const imageOps: Record<string, OpMapping> = {
  ResizeBilinear: resize('linear', 'half_pixel'),
  ResizeNearestNeighbor: resize('nearest', 'tf_half_pixel_for_nn', { nearest_mode: 'floor' }),
  DepthToSpace: depthSpace('DepthToSpace'),
  SpaceToDepth: depthSpace('SpaceToDepth'),
}
