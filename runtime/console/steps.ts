import { useEffect, useRef, useState } from 'preact/hooks'
import { isAbort } from '../client/errors.ts'
import type { Failure } from './components/ErrorPanel.ts'

/** What a stepped action is given: `enter` names the step it begins (and its context for errors). */
export type StepAction<S extends string> = (enter: (step: S, context: string) => void, signal: AbortSignal) => Promise<void>

/**
 * A form's action done in named steps (upload, then install…), one run at a time. The run is
 * aborted when the view goes; a failure is kept with the context of the step it happened in,
 * an abort is not a failure; the step is back to `idle` once the run ends, however it ends.
 */
export function useSteps<S extends string>() {
  const [step, setStep] = useState<S | 'idle'>('idle')
  const [failure, setFailure] = useState<Failure | null>(null)
  const abort = useRef<AbortController | null>(null)
  useEffect(() => () => abort.current?.abort(), [])

  const run = async (action: StepAction<S>) => {
    const controller = new AbortController()
    abort.current = controller
    setFailure(null)
    let context = ''
    try {
      await action((next, nextContext) => { context = nextContext; setStep(next) }, controller.signal)
    } catch (e) {
      if (!isAbort(e)) setFailure({ error: e, context })
    } finally {
      setStep('idle')
      abort.current = null
    }
  }
  return { step, busy: step !== 'idle', failure, setFailure, run }
}
