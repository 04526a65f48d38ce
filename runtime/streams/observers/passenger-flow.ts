import type { EventsService } from '../../../shared/events/types.ts'
import type { FlowCounter, TaskConfig } from '../../../shared/tasks/types.ts'
import { follow, type LineState, type Point } from '../line-crossing.ts'
import type { Track } from '../tracker.ts'
import type { StreamObserverFactory } from './types.ts'

/** The point of an object that crosses a counter's line, in ratios of the picture. */
function pointOf(track: Track, size: { width: number; height: number }, point: FlowCounter['point']): Point {
  const { x, y, width, height } = track.box
  return { x: (x + width / 2) / size.width, y: (point === 'foot' ? y + height : y + height / 2) / size.height }
}

/**
 * Passenger-flow counters (docs/cameras-and-stream-tasks.md "Stream tasks", `taskConfig.counters`): each confirmed
 * object is followed across each counter's line; every crossing is one `passengerFlow.counted`
 * event (`in: 1` or `out: 1`), which `/gtw/cwai/Event/PassengerFlowStatistics` sums.
 */
export const passengerFlow = (deps: { events: EventsService }): StreamObserverFactory => (row) => {
  const counters = (row.taskConfig as TaskConfig).counters ?? []
  if (counters.length === 0) return {}
  /** object id → counter id → where it was last seen clearly on one side. */
  const states = new Map<string, Map<string, LineState>>()
  return {
    async onAnalysis({ frame, tracks, left, later }) {
      for (const track of tracks) {
        const mine = states.get(track.id) ?? new Map<string, LineState>()
        states.set(track.id, mine)
        for (const counter of counters) {
          if (counter.labels && !counter.labels.includes(track.label)) continue
          const a = { x: counter.from.xRatio, y: counter.from.yRatio }
          const b = { x: counter.to.xRatio, y: counter.to.yRatio }
          const { state, crossing } = follow(a, b, mine.get(counter.counterId), pointOf(track, frame.source, counter.point))
          if (state) mine.set(counter.counterId, state)
          if (!crossing) continue
          const counted = {
            taskId: row.taskId, cameraId: row.cameraId, counterId: counter.counterId, counterName: counter.counterName ?? counter.counterId,
            objectId: track.id, label: track.label, in: crossing === 'in' ? 1 : 0, out: crossing === 'out' ? 1 : 0,
          }
          // After the object's object.entered, which may still wait for its snapshot.
          await later(async () => deps.events.emit('passengerFlow.counted', counted))
        }
      }
      for (const track of left) states.delete(track.id)
    },
    async onStop() {
      states.clear()
    },
  }
}

/** Counter ids are unique within a task and a line has two distinct ends; the reason when not. */
export function counterProblem(config: TaskConfig): { field: string; reason: string } | null {
  const seen = new Set<string>()
  for (const [i, counter] of (config.counters ?? []).entries()) {
    if (seen.has(counter.counterId)) return { field: `/taskConfig/counters/${i}/counterId`, reason: `counterId ${counter.counterId} is used twice` }
    seen.add(counter.counterId)
    if (counter.from.xRatio === counter.to.xRatio && counter.from.yRatio === counter.to.yRatio)
      return { field: `/taskConfig/counters/${i}/to`, reason: 'the line needs two different points' }
  }
  return null
}
