import { objectEvents, type ObjectEventDeps } from './object-events.ts'
import { alarmPolicies, type AlarmObserverDeps } from './alarm-policies.ts'
import { logicAlarms } from './logic-alarms.ts'
import type { StreamObserverFactory } from './types.ts'

export type { FrameAnalysis, StreamObserver, StreamObserverFactory } from './types.ts'

/**
 * The observers every stream task runs, in order. A new reaction to tracked objects (a counter,
 * a policy, recognition) is one more entry here, in a file of its own.
 */
export const streamObservers = (deps: ObjectEventDeps & AlarmObserverDeps): StreamObserverFactory[] => [
  objectEvents(deps),
  logicAlarms(deps),
  alarmPolicies(deps),
]
