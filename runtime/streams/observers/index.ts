import { objectEvents, type ObjectEventDeps } from './object-events.ts'
import { passengerFlow } from './passenger-flow.ts'
import { recognition, type RecognitionDeps } from './recognition.ts'
import { alarmPolicies, type AlarmObserverDeps } from './alarm-policies.ts'
import { logicAlarms } from './logic-alarms.ts'
import type { StreamObserverFactory } from './types.ts'

export type { FrameAnalysis, StreamObserver, StreamObserverFactory } from './types.ts'
export { counterProblem } from './passenger-flow.ts'

/**
 * The observers every stream task runs, in order. A new reaction to tracked objects (a counter,
 * a policy, recognition) is one more entry here, in a file of its own.
 */
export const streamObservers = (deps: ObjectEventDeps & RecognitionDeps & AlarmObserverDeps): StreamObserverFactory[] => [
  objectEvents(deps),
  passengerFlow(deps),
  recognition(deps),
  logicAlarms(deps),
  alarmPolicies(deps),
]
