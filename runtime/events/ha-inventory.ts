import type { HaInventory, HaTask } from './ha-configs.ts'
import type { Services } from '../../shared/handler.ts'

/** More labels than this in an algorithm: only those seen on the task get a binary sensor. */
const MAX_DECLARED_LABELS = 16
const PAGE = 500

/** Every row of a paged listing: pages of PAGE rows are read until a shorter one. */
async function allPages<Row>(read: (pageNum: number) => Promise<{ rows: Row[] }>): Promise<Row[]> {
  const rows: Row[] = []
  for (let pageNum = 1; ; pageNum++) {
    const page = await read(pageNum)
    rows.push(...page.rows)
    if (page.rows.length < PAGE) return rows
  }
}

/** Every camera of the device. */
export function cameraRows(services: Services) {
  return allPages((pageNum) => services.cameras.page({ pageNum, pageSize: PAGE }))
}

/** Every alarm policy of the device. */
export function policyRows(services: Services) {
  return allPages((pageNum) => services.alarms.page({ pageNum, pageSize: PAGE }))
}

/** The labels an algorithm's result detector reports (models/manifest-schema.ts), when few enough to list. */
function declaredLabels(services: Services, algorithmCode: string): string[] {
  const manifest = services.algorithms.get(algorithmCode)?.manifest
  const node = manifest?.nodes.find((n) => n.id === manifest.result.targets) as { labels?: string[]; decoder?: { kind?: string; classes?: number[] } } | undefined
  if (!node?.labels) return []
  const labels = node.decoder?.kind === 'centernet' && node.decoder.classes ? node.decoder.classes.map((i) => node.labels![i]).filter((l): l is string => !!l) : node.labels
  return labels.length <= MAX_DECLARED_LABELS ? [...new Set(labels)] : []
}

/**
 * What the device has, as Home Assistant entities see it (runtime/events/ha-configs.ts
 * HaInventory): cameras, stream tasks with the labels their algorithm declares and those seen
 * on them (`seenLabels`, by task id), their counters, and the alarm policies.
 */
export async function haInventory(services: Services, seenLabels: ReadonlyMap<string, Set<string>>): Promise<HaInventory> {
  const cameras = await cameraRows(services)
  const names = new Map(cameras.map((c) => [c.cameraId, c.cameraName]))
  const tasks: HaTask[] = services.streams.list().map((task) => {
    const counters = Array.isArray(task.taskConfig.counters) ? (task.taskConfig.counters as { counterId: string; counterName?: string }[]) : []
    return {
      taskId: task.taskId,
      cameraId: task.cameraId,
      cameraName: names.get(task.cameraId) ?? null,
      labels: [...new Set([...declaredLabels(services, task.algorithmCode), ...(seenLabels.get(task.taskId) ?? [])])].sort(),
      counters: counters.map((c) => ({ counterId: c.counterId, counterName: c.counterName ?? c.counterId })),
    }
  })
  const policies = (await policyRows(services)).map((p) => ({ policyId: p.policyId, policyName: p.policyName }))
  return { cameras: cameras.map((c) => ({ cameraId: c.cameraId, cameraName: c.cameraName })), tasks, policies }
}
