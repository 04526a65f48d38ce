import type { TSchema } from '@sinclair/typebox'
import { ClassifierNode, CropNode, DetectorNode, LogicNode, RecognizerNode } from '../../models/manifest-schema.ts'

/**
 * The atomic-action catalogue (spec 4.10 "Atomic action", `/gtw/cwai/atomic/action/list`):
 * the node kinds a pipeline manifest may use, with their parameters. Names, types, required
 * flags and allowed values come from the manifest schema itself (models/manifest-schema.ts), so the
 * list cannot drift from what manifests accept; the descriptions are the table below.
 */
export interface ActionParameter {
  name: string
  /** JSON type: string, number, integer, boolean, array, object, or `oneOf` for kinds. */
  type: string
  required: boolean
  description: string
  /** Allowed values (literals), or the `kind`s of a union (decoders, heads). */
  values?: (string | number)[]
}

export interface AtomicAction {
  action: string
  description: string
  parameters: ActionParameter[]
}

const actions: { action: string; schema: TSchema; description: string; parameters: Record<string, string> }[] = [
  {
    action: 'detector',
    schema: DetectorNode,
    description: 'Runs a detection or segmentation model on the whole image; its targets are boxes, keypoints or mask polygons.',
    parameters: {
      id: 'Node id, unique in the pipeline.',
      action: 'Always "detector".',
      model: 'Key of the model in the manifest\'s models (package file, build output or operator upload).',
      input: 'Input tensor: resize mode, size, layout (NHWC/NCHW), channel order, normalization, optional gray weights.',
      decoder: 'How outputs become targets, by kind.',
      scoreThreshold: 'Minimum target score (0..1); a task may override it.',
      nms: 'Optional non-maximum suppression: method, IoU threshold, maximum detections.',
      labels: 'Class index → label in confidence[].',
      inputSizes: 'Optional other square input sizes a task may choose (taskConfig.detectorInputSize), each {size, model}: the key of the model converted at that size; the input\'s own size is the default.',
    },
  },
  {
    action: 'crop',
    schema: CropNode,
    description: 'Cuts every target of a detector out of the image for the classifiers after it.',
    parameters: {
      id: 'Node id, unique in the pipeline.',
      action: 'Always "crop".',
      from: 'The detector node whose targets are cut.',
      shape: '"box" (axis-aligned) or "polygon" (rotated quadrilateral).',
      padding: 'Extra margin around the box, as a fraction of its size.',
      part: 'Only this part of the box (fractions x, y, width, height), e.g. the head of a person.',
      rotateTallerThan: 'Crops taller than wide by this ratio are turned upright.',
    },
  },
  {
    action: 'classifier',
    schema: ClassifierNode,
    description: 'Runs a model on each crop; its head appends labels to confidence[], sets featurePreview or turns the crop.',
    parameters: {
      id: 'Node id, unique in the pipeline.',
      action: 'Always "classifier".',
      from: 'The crop node whose crops are classified.',
      model: 'Key of the model in the manifest\'s models.',
      input: 'Input tensor of the crop (as for the detector).',
      head: 'How outputs become labels, by kind.',
      scoreThreshold: 'Labels below this confidence are not appended; a task may override it.',
    },
  },
  {
    action: 'logic',
    schema: LogicNode,
    description: 'Decides bLogicResult per target and bDetected per area (spec 2.6).',
    parameters: {
      id: 'Node id, unique in the pipeline.',
      action: 'Always "logic".',
      condition: 'A target meets the condition when confidence[] holds label with at least minConfidence.',
      minTargets: 'An area is bDetected when at least this many of its targets meet the condition.',
    },
  },
  {
    action: 'recognizer',
    schema: RecognizerNode,
    description: 'Describes every target of a detector (a face aligned by its eyes, or the box cut out) or the whole image, and names it from the galleries of its kind the task chooses (taskConfig.recognition): the item\'s name with the similarity, or "unknown", joins confidence[].',
    parameters: {
      id: 'Node id, unique in the pipeline.',
      action: 'Always "recognizer".',
      from: 'The detector whose targets are recognized; absent: the whole image is one target (it can then be result.targets).',
      model: 'Key of the descriptor model in the manifest\'s models.',
      input: 'Input tensor of the region described (as for the detector).',
      align: 'Faces: eye keypoint indices (the detector must give them), square side as a multiple of the eye distance, eye line height in the square; or {kind: "template", keypoints, template, padding}: the keypoints fitted (rotation, scale, shift) onto template points of the unit face square, padded by padding × its side, drawn at the input\'s width and height (dlib\'s face chip); absent: the target\'s box as it is.',
      descriptorOutput: 'The model output holding the descriptor.',
      normalize: 'false: the descriptor is used raw, for a gallery measured by Euclidean distance (docs/galleries.md "Measure"); true when absent: L2-normalized before use.',
      descriptorVersion: 'A version of the descriptor beyond its model and output (alignment, normalization): a change re-describes the galleries\' pictures.',
      gallery: 'Which galleries are searched: face (default), body or things (spec 4.10).',
      scoreThreshold: 'Minimum similarity of a match (the gallery kind\'s measure, docs/galleries.md "Measure"); taskConfig.recognition.threshold overrides it.',
    },
  },
]

function parameterOf(name: string, schema: TSchema, required: boolean, description: string): ActionParameter {
  if ('const' in schema) return { name, type: typeof schema.const, required, description, values: [schema.const] }
  if (Array.isArray(schema.anyOf)) {
    const options = schema.anyOf as TSchema[]
    const literals = options.filter((o) => 'const' in o).map((o) => o.const as string | number)
    if (literals.length === options.length) return { name, type: typeof literals[0], required, description, values: literals }
    const kinds = options.map((o) => (o.properties as Record<string, TSchema> | undefined)?.kind?.const as string | undefined).filter((k) => k !== undefined)
    return { name, type: 'oneOf', required, description, values: kinds }
  }
  return { name, type: String(schema.type), required, description }
}

export function atomicActionCatalogue(): AtomicAction[] {
  return actions.map(({ action, schema, description, parameters }) => {
    const properties = schema.properties as Record<string, TSchema>
    const required = new Set<string>((schema.required as string[] | undefined) ?? [])
    return {
      action,
      description,
      parameters: Object.entries(properties).map(([name, s]) => {
        const text = parameters[name]
        if (text === undefined) throw new Error(`atomic action ${action}: parameter ${name} has no description`)
        return parameterOf(name, s, required.has(name), text)
      }),
    }
  })
}
