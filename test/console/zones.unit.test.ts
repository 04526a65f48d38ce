import { describe, expect, it } from 'vitest'
import { fraction, freshId, pointAt, regionChoices, regionsOf, zonesProblem } from '../../runtime/console/zones.ts'

const square = [{ xRatio: 0, yRatio: 0 }, { xRatio: 1, yRatio: 0 }, { xRatio: 1, yRatio: 1 }]
const task = (taskId: string, cameraId: string, regions?: { areaId: string; areaName?: string }[]) =>
  ({ taskId, cameraId, taskName: null, taskConfig: regions ? { regions: regions.map((r) => ({ ...r, polygon: square })) } : {} })

describe('zones drawn on a camera picture (console)', () => {
  it('a pointer position in the picture\'s box is its fraction, 4 decimals, clamped to the picture', () => {
    const box = { left: 100, top: 50, width: 800, height: 450 }
    expect(pointAt(300, 140, box)).toEqual({ xRatio: 0.25, yRatio: 0.2 })
    expect(pointAt(101, 51, box)).toEqual({ xRatio: 0.0013, yRatio: 0.0022 })
    expect(pointAt(50, 600, box)).toEqual({ xRatio: 0, yRatio: 1 })
  })

  it('a typed coordinate is a fraction 0..1 or nothing', () => {
    expect(fraction('0.12345')).toBe(0.1235)
    for (const text of ['', ' ', '1.01', '-0.1', 'x', 'NaN']) expect(fraction(text), text).toBeNull()
  })

  it('new zones get the first free zone-N; ids must be given and unique, 3 to 64 points', () => {
    expect(freshId([])).toBe('zone-1')
    expect(freshId([{ areaId: 'zone-2', polygon: square }])).toBe('zone-3')
    expect(freshId([{ areaId: 'zone-3', polygon: square }, { areaId: 'a', polygon: square }])).toBe('zone-4')
    expect(zonesProblem([{ areaId: 'a', polygon: square }])).toBeNull()
    expect(zonesProblem([{ areaId: ' ', polygon: square }])).toBe('Give every zone an id (up to 64 characters).')
    expect(zonesProblem([{ areaId: 'a', polygon: square }, { areaId: 'a ', polygon: square }])).toBe('Two zones have the id a: give each its own.')
    expect(zonesProblem([{ areaId: 'a', polygon: square.slice(0, 2) }])).toBe('A zone needs 3 to 64 points.')
    expect(regionsOf([{ areaId: ' door ', areaName: ' ', polygon: square }])).toEqual([{ areaId: 'door', polygon: square }])
  })

  it('a policy\'s zone choices: the task\'s zones, the camera\'s tasks\' zones, or all; "0" for a task without zones', () => {
    const tasks = [task('a', 'c1', [{ areaId: 'door', areaName: 'Door' }, { areaId: 'desk' }]), task('b', 'c1'), task('c', 'c2', [{ areaId: 'gate', areaName: 'gate' }])]
    expect(regionChoices('task:a', tasks)).toEqual([{ areaId: 'door', label: 'Door (door)' }, { areaId: 'desk', label: 'desk' }])
    expect(regionChoices('task:b', tasks)).toEqual([{ areaId: '0', label: 'Whole picture (0)' }])
    expect(regionChoices('camera:c1', tasks).map((z) => z.areaId)).toEqual(['door', 'desk', '0'])
    expect(regionChoices('', tasks).map((z) => z.areaId)).toEqual(['door', 'desk', '0', 'gate'])
    expect(regionChoices('task:nope', tasks)).toEqual([])
  })
})
