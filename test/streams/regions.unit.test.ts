import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { DetectionResultCore } from '../../shared/inference/types.ts'
import { defaultManifestDir, loadManifests } from '../../models/load-manifests.ts'
import { regionInputSide } from '../../runtime/streams/analysis-size.ts'
import { validateInput } from '../../shared/schema/validate.ts'
import { TaskCreateInput, TaskUpdateInput } from '../../shared/streams/types.ts'
import { clip, cropRgb, cropsFor, cutByCrop, detectCrops, joinResults, merge, pad, planRegions, square, toFrame } from '../../runtime/streams/regions.ts'

/** The analysed frame of the footage: 768 × 432 read at 512 × 288. */
const FRAME = { width: 512, height: 288 }
/** The person detector's input side is 512: a crop is at least the frame's shorter side, 288. */
const SETTINGS = { padShare: 0.25, minSide: 288, maxRegions: 2, maxCoverage: 0.6 }

const result = (boxes: { x: number; y: number; width: number; height: number }[], landmarks: { xRatio: number; yRatio: number }[] = []): DetectionResultCore => ({
  algorithmCode: 'person-detector', timestamp: '1',
  areaList: [{ areaId: 'default', areaName: 'default', bDetected: false, targetList: boxes.map((box) => ({ box, confidence: [{ label: 'person', confidence: 0.9 }], landmark: landmarks, maskPolygon: [] })) }],
})

describe('motion regions: padding, merging, squaring (runtime/streams/regions.ts)', () => {
  it('pads a box by a share of its larger side on each side and cuts it to the frame', () => {
    // 40 × 80: the margin is 0.25 × 80 = 20.
    expect(pad({ x: 100, y: 100, width: 40, height: 80 }, 0.25, FRAME)).toEqual({ x: 80, y: 80, width: 80, height: 120 })
    // At the bottom-left corner: margin 10, x −10 → 0, bottom 300 → 288.
    expect(pad({ x: 0, y: 250, width: 40, height: 40 }, 0.25, FRAME)).toEqual({ x: 0, y: 240, width: 50, height: 48 })
    expect(clip({ x: 520, y: 0, width: 10, height: 10 }, FRAME)).toBeNull()
    expect(clip({ x: 10.4, y: 5.6, width: 10, height: 10 }, FRAME)).toEqual({ x: 10, y: 5, width: 11, height: 11 })
  })

  it('merges overlapping boxes into their union, through chains; boxes that only touch stay apart', () => {
    expect(merge([{ x: 0, y: 0, width: 10, height: 10 }, { x: 5, y: 5, width: 10, height: 10 }, { x: 100, y: 100, width: 10, height: 10 }]))
      .toEqual([{ x: 0, y: 0, width: 15, height: 15 }, { x: 100, y: 100, width: 10, height: 10 }])
    // C overlaps A (x 8 < 10) and B (x 22 > 20): all three become one.
    expect(merge([{ x: 0, y: 0, width: 10, height: 10 }, { x: 20, y: 0, width: 10, height: 10 }, { x: 8, y: 0, width: 14, height: 5 }]))
      .toEqual([{ x: 0, y: 0, width: 30, height: 10 }])
    expect(merge([{ x: 0, y: 0, width: 10, height: 10 }, { x: 10, y: 0, width: 10, height: 10 }])).toHaveLength(2)
  })

  it('squares a box around its centre, at least minSide, moved inside the frame', () => {
    // Centre (120, 90), side 100.
    expect(square({ x: 100, y: 50, width: 40, height: 80 }, 100, FRAME)).toEqual({ x: 70, y: 40, width: 100, height: 100 })
    // Centre (500, 265): x 450 → 412, y 215 → 188 so that the square ends at the frame's edge.
    expect(square({ x: 490, y: 250, width: 20, height: 30 }, 100, FRAME)).toEqual({ x: 412, y: 188, width: 100, height: 100 })
    // Wider than the frame is high: as wide as the box, as high as the frame.
    expect(square({ x: 0, y: 0, width: 400, height: 50 }, 288, FRAME)).toEqual({ x: 0, y: 0, width: 400, height: 288 })
  })

  it('plans one 288-pixel square for a person-sized motion in the footage\'s frame', () => {
    // Padded: (180, 80) 80 × 120, centre (220, 140); square 288: x 76, y −4 → 0. 288² is 0.5625 of the frame.
    expect(planRegions([{ x: 200, y: 100, width: 40, height: 80 }], FRAME, SETTINGS)).toEqual([{ x: 76, y: 0, width: 288, height: 288 }])
  })

  it('plans the whole frame for motion at both ends of the frame (the squares merge into the frame) and for no motion', () => {
    // Squares (0, 0) and (224, 0), both 288: they overlap, their union is the frame.
    expect(planRegions([{ x: 20, y: 100, width: 20, height: 40 }, { x: 460, y: 100, width: 20, height: 40 }], FRAME, SETTINGS)).toBeNull()
    expect(planRegions([], FRAME, SETTINGS)).toBeNull()
  })

  it('plans two crops in a large frame, and the whole frame when only one is allowed', () => {
    const large = { width: 1000, height: 500 }
    const boxes = [{ x: 100, y: 100, width: 40, height: 40 }, { x: 800, y: 300, width: 40, height: 40 }]
    // Margins 10: (90, 90) and (790, 290), 60 × 60; squares of 100 around (120, 120) and (820, 320).
    expect(planRegions(boxes, large, { ...SETTINGS, minSide: 100 })).toEqual([{ x: 70, y: 70, width: 100, height: 100 }, { x: 770, y: 270, width: 100, height: 100 }])
    expect(planRegions(boxes, large, { ...SETTINGS, minSide: 100, maxRegions: 1 })).toBeNull()
    // Squares of 400 cover 2 × 160000 / 500000 = 0.64 of the frame: more than 0.6.
    expect(planRegions(boxes, large, { ...SETTINGS, minSide: 400 })).toBeNull()
  })
})

describe('crops of a frame and their boxes in the frame', () => {
  it('copies the crop\'s pixels row by row', () => {
    // A 4 × 3 frame whose pixel i has the bytes 3i, 3i+1, 3i+2.
    const rgb = Uint8Array.from({ length: 4 * 3 * 3 }, (_, i) => i)
    const pixels = (...indices: number[]) => indices.flatMap((p) => [3 * p, 3 * p + 1, 3 * p + 2])
    // (1,1) (2,1) (1,2) (2,2) are pixels 5, 6, 9, 10.
    expect([...cropRgb(rgb, 4, { x: 1, y: 1, width: 2, height: 2 })]).toEqual(pixels(5, 6, 9, 10))
  })

  it('moves boxes and landmarks found in a crop by the crop\'s corner and joins the crops\' targets', () => {
    expect(toFrame({ x: 10, y: 20, width: 30, height: 40 }, { x: 76, y: 0, width: 288, height: 288 })).toEqual({ x: 86, y: 20, width: 30, height: 40 })
    const joined = joinResults([
      { result: result([{ x: 10, y: 20, width: 30, height: 40 }], [{ xRatio: 15, yRatio: 25 }]), crop: { x: 76, y: 0, width: 288, height: 288 } },
      { result: result([{ x: 0, y: 5, width: 10, height: 10 }]), crop: { x: 600, y: 100, width: 100, height: 100 } },
    ])
    expect(joined.areaList).toHaveLength(1)
    expect(joined.areaList[0]!.targetList.map((t) => t.box)).toEqual([{ x: 86, y: 20, width: 30, height: 40 }, { x: 600, y: 105, width: 10, height: 10 }])
    expect(joined.areaList[0]!.targetList[0]!.landmark).toEqual([{ xRatio: 91, yRatio: 25 }])
  })

  it('calls a box cut when it touches a crop edge inside the frame, not one on the frame\'s edge', () => {
    const crop = { x: 76, y: 0, width: 288, height: 288 }
    expect(cutByCrop({ x: 0.5, y: 50, width: 40, height: 100 }, crop, FRAME)).toBe(true)
    // Right edge 287 ≥ 288 − 2, and the crop ends at x 364 inside the 512-pixel frame.
    expect(cutByCrop({ x: 250, y: 50, width: 37, height: 100 }, crop, FRAME)).toBe(true)
    // Top and bottom of this crop are the frame's.
    expect(cutByCrop({ x: 100, y: 0, width: 40, height: 100 }, crop, FRAME)).toBe(false)
    expect(cutByCrop({ x: 100, y: 150, width: 40, height: 138 }, crop, FRAME)).toBe(false)
    expect(cutByCrop({ x: 100, y: 50, width: 40, height: 100 }, crop, FRAME)).toBe(false)
  })
})

describe('which frames are detected on crops', () => {
  const question = { side: 512, reason: 'motion' as const, sinceWholeMs: 400, minDetectIntervalMs: 1000, motion: [{ x: 200, y: 100, width: 40, height: 80 }], tracked: [], frame: FRAME }

  it('crops for motion while the whole frame is not due', () => {
    expect(cropsFor(question)).toEqual([{ x: 76, y: 0, width: 288, height: 288 }])
    expect(cropsFor({ ...question, reason: 'walking' })).toEqual([{ x: 76, y: 0, width: 288, height: 288 }])
  })

  it('the whole frame at the interval, for a still object, when minDetectIntervalMs has passed, and with region detection off', () => {
    expect(cropsFor({ ...question, reason: 'interval' })).toBeNull()
    expect(cropsFor({ ...question, reason: 'stationary' })).toBeNull()
    expect(cropsFor({ ...question, sinceWholeMs: 1000 })).toBeNull()
    expect(cropsFor({ ...question, side: null })).toBeNull()
  })

  it('holds the tracked objects in the crops; one far from the motion makes it the whole frame', () => {
    // A person tracked at (300, 60) 60 × 150: padded by 37.5 → (262, 22) 136 × 226, beside the motion's (180, 80) 80 × 120;
    // squares around (220, 140) and (330, 135): (76, 0) and (186, 0), merged (76, 0) 398 × 288, 0.78 of the frame.
    expect(cropsFor({ ...question, tracked: [{ x: 300, y: 60, width: 60, height: 150 }] })).toBeNull()
    // A person on the motion: padded by 30 → (170, 50) 100 × 180, holding the motion's (180, 80) 80 × 120;
    // the square around (220, 140): (76, 0).
    expect(cropsFor({ ...question, tracked: [{ x: 200, y: 80, width: 40, height: 120 }] })).toEqual([{ x: 76, y: 0, width: 288, height: 288 }])
  })

  it('detects each crop and gives up on the crops when a box touches an inner edge', async () => {
    const frame = { rgb: new Uint8Array(FRAME.width * FRAME.height * 3), ...FRAME }
    const seen: { width: number; height: number }[] = []
    const inside = async (image: { width: number; height: number }) => { seen.push({ width: image.width, height: image.height }); return result([{ x: 100, y: 40, width: 50, height: 120 }]) }
    const found = await detectCrops(inside, frame, [{ x: 76, y: 0, width: 288, height: 288 }])
    expect(seen).toEqual([{ width: 288, height: 288 }])
    expect(found!.areaList[0]!.targetList.map((t) => t.box)).toEqual([{ x: 176, y: 40, width: 50, height: 120 }])
    const atEdge = async () => result([{ x: 1, y: 40, width: 50, height: 120 }])
    expect(await detectCrops(atEdge, frame, [{ x: 76, y: 0, width: 288, height: 288 }])).toBeNull()
  })
})

describe('the regionDetection task field (shared/streams/types.ts)', () => {
  it('TaskCreate fills in the defaults, region detection on; Task/update leaves out what it does not name', () => {
    const created = validateInput<Record<string, unknown>>(TaskCreateInput, { taskId: 't', algorithmCode: 'person-detector', cameraId: 'c', targetFps: 5 })
    expect(created).toMatchObject({ motionGating: true, minDetectIntervalMs: 1000, trackedDetectIntervalMs: 1000, regionDetection: true })
    expect(validateInput(TaskUpdateInput, { taskId: 't', regionDetection: false })).toEqual({ taskId: 't', regionDetection: false })
    expect(() => validateInput(TaskUpdateInput, { taskId: 't', regionDetection: 'no' })).toThrow(expect.objectContaining({ id: 'InvalidParam', item: expect.objectContaining({ details: expect.objectContaining({ field: '/regionDetection' }) }) }))
  })
})

describe('which pipelines may be detected on crops (runtime/streams/analysis-size.ts)', () => {
  const root = path.resolve(import.meta.dirname, '../..')
  const manifests = loadManifests(defaultManifestDir(root), root)
  const manifest = (id: string) => manifests.get(id)!.manifest
  it('the person detector, from its 512 input; not with areas of the task, a logic node or mask polygons', () => {
    expect(regionInputSide(manifest('person-detector'), {})).toBe(512)
    expect(regionInputSide(manifest('person-detector'), { regions: [{ areaId: 'door' }] })).toBeNull()
    expect(regionInputSide(manifest('no-safety-helmet-analysis'), {})).toBeNull()
    expect(regionInputSide(manifest('person-segmentation'), {})).toBeNull()
  })

  it('at the task\'s detector input size (taskConfig.detectorInputSize 320: crops from 320 up)', () => {
    expect(regionInputSide(manifest('person-detector'), { detectorInputSize: 320 })).toBe(320)
    // A size the detector does not offer keeps its own (PTaskCreate refuses it before).
    expect(regionInputSide(manifest('person-detector'), { detectorInputSize: 400 })).toBe(512)
  })
})
