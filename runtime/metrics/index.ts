import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { MetricsService } from '../../shared/metrics/types.ts'
import type { StreamTaskStatus } from '../../shared/streams/types.ts'

/**
 * The metrics of one runtime (docs/metrics.md "Metrics"): one prom-client `Registry` per runtime, made
 * in runtime/services.ts and handed to the parts that record, never prom-client's global
 * registry, so that several runtimes in one process (tests) keep apart. Every label value comes
 * from a bounded set (route patterns, catalogue error ids, algorithm ids, fixed names), never
 * from client text.
 */

/** Seconds, from a fast JSON answer to a detection near DETECT_TIMEOUT_MS (55 s). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

export type EventChannel = 'websocket' | 'mqtt' | 'webhook'
/** `retried`: an attempt failed and the event will be sent again; `failed`: it will not (dead letter, client gone). */
export type DeliveryOutcome = 'delivered' | 'failed' | 'retried'
/** What an event channel records: `count` events of one outcome. */
export type DeliveryRecorder = (outcome: DeliveryOutcome, count?: number) => void

export type UploadProtocol = 'uploadTemp' | 'tus'

/** What scrape-time gauges read; runtime/services.ts plugs each in once its area exists. */
export interface MetricSources {
  uploadSessions?: () => Promise<Record<string, number>>
  eventBacklog?: () => Record<EventChannel, number>
  /** Every stream task (a cancelled one is gone, and so are its series). */
  streamTasks?: () => StreamTaskStatus[]
}

/** What a stream task records as it runs; the rest is read from its status at scrape time. */
export interface StreamTaskMetrics {
  detectorLatency(taskId: string, ms: number): void
  /** Removes a cancelled task's series. */
  forget(taskId: string): void
}

let processRegistry: Registry | null = null
/**
 * Memory, CPU, event-loop lag, GC, handles: facts of the process, not of one runtime. prom-client
 * starts an event-loop monitor and a GC observer for them that cannot be stopped, so they are
 * registered once per process (when the first runtime starts: CPU time and lag are measured
 * from then on) and merged into each runtime's exposition.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

export class DeviceMetrics implements MetricsService {
  readonly registry = new Registry()
  private readonly process = processMetrics()
  readonly sources: MetricSources = {}

  readonly http = {
    requests: new Counter({
      name: 'http_requests_total', help: 'HTTP requests answered, by route pattern (or "unmatched"), method and status.',
      labelNames: ['route', 'method', 'status'] as const, registers: [this.registry],
    }),
    duration: new Histogram({
      name: 'http_request_duration_seconds', help: 'Time from a request to its response headers, by route pattern and method.',
      labelNames: ['route', 'method'] as const, buckets: DURATION_BUCKETS, registers: [this.registry],
    }),
  }

  readonly uploads = {
    receivedBytes: new Counter({
      name: 'upload_received_bytes_total', help: 'Upload bytes accepted into sessions (a resent chunk is not counted again), by protocol.',
      labelNames: ['protocol'] as const, registers: [this.registry],
    }),
    refusals: new Counter({
      name: 'upload_refusals_total', help: 'Upload chunks and tus creations refused, by protocol and catalogue error id.',
      labelNames: ['protocol', 'reason'] as const, registers: [this.registry],
    }),
  }

  readonly inference = {
    sidecarRestarts: new Counter({
      name: 'inference_sidecar_restarts_total', help: 'Times the inference sidecar was ready again after it ended.', registers: [this.registry],
    }),
    duration: new Histogram({
      name: 'inference_duration_seconds', help: 'Sidecar detection time (queueing, decoding, pipeline, overlay), by algorithm id and outcome (ok, error).',
      labelNames: ['algorithm', 'outcome'] as const, buckets: DURATION_BUCKETS, registers: [this.registry],
    }),
  }

  readonly events = {
    deliveries: new Counter({
      name: 'event_deliveries_total', help: 'Event deliveries by channel and outcome (delivered, retried, failed).',
      labelNames: ['channel', 'outcome'] as const, registers: [this.registry],
    }),
  }

  readonly streams = {
    detectorLatency: new Histogram({
      name: 'stream_task_detector_latency_seconds', help: 'Detector time of one frame of a stream task (sidecar round trip), by task id.',
      labelNames: ['task'] as const, buckets: DURATION_BUCKETS, registers: [this.registry],
    }),
  }

  constructor() {
    const sources = this.sources
    // A stream task's tallies, as its status has them: set at each scrape from the tasks that
    // exist, so the series of a cancelled task disappear with it.
    const perTask = (name: string, help: string, value: (t: StreamTaskStatus) => number, type: typeof Gauge | typeof Counter) =>
      new type({
        name, help, labelNames: ['task'] as const, registers: [this.registry],
        collect() {
          this.reset()
          for (const task of sources.streamTasks?.() ?? []) this.inc({ task: task.taskId }, value(task))
        },
      })
    perTask('stream_task_processed_fps', 'Frames a stream task processed per second over the last 10 s (analysed or skipped by motion gating).', (t) => t.processedFps, Gauge)
    perTask('stream_task_frames_total', 'Frames the camera reader delivered to a stream task since it started.', (t) => t.framesIn, Counter)
    perTask('stream_task_frames_dropped_total', 'Frames a stream task dropped from its full queue (oldest first) since it started.', (t) => t.framesDropped, Counter)
    perTask('stream_task_motion_skipped_total', 'Frames motion gating kept from the detector since the task started.', (t) => t.motionSkipped, Counter)
    perTask('stream_task_tracked_skipped_total', 'Of those, frames kept from the detector while every motion lay on tracked objects (trackedDetectIntervalMs).', (t) => t.trackedSkipped, Counter)
    new Gauge({
      name: 'upload_sessions', help: 'Upload sessions in the database, by state (spec 3.1).', labelNames: ['state'] as const, registers: [this.registry],
      async collect() {
        for (const [state, count] of Object.entries((await sources.uploadSessions?.()) ?? {})) this.set({ state }, count)
      },
    })
    new Gauge({
      name: 'event_outbox_backlog', help: 'Events written to the outbox and not yet delivered, by channel (summed over webhook URLs and WebSocket clients).',
      labelNames: ['channel'] as const, registers: [this.registry],
      collect() {
        for (const [channel, count] of Object.entries(sources.eventBacklog?.() ?? {})) this.set({ channel }, count)
      },
    })
  }

  streamTaskMetrics(): StreamTaskMetrics {
    const histogram = this.streams.detectorLatency
    return {
      detectorLatency: (task, ms) => histogram.observe({ task }, ms / 1000),
      forget: (task) => histogram.remove({ task }),
    }
  }

  /** The delivery recorder of one event channel. */
  deliveries(channel: EventChannel): DeliveryRecorder {
    const counter = this.events.deliveries
    return (outcome, count = 1) => { if (count > 0) counter.inc({ channel, outcome }, count) }
  }

  async render(): Promise<{ contentType: string; body: string }> {
    const merged = Registry.merge([this.process, this.registry])
    return { contentType: this.registry.contentType, body: await merged.metrics() }
  }
}
