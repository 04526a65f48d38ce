import { describe, expect, it } from 'vitest'
import { polygonOf } from '../../runtime/console/region.ts'

describe('a region\'s corners as typed in the stream task form', () => {
  it('reads x,y fractions separated by spaces or semicolons', () => {
    expect(polygonOf('0.3,0 0.85,0 0.85,1 0.3,1')).toEqual([{ xRatio: 0.3, yRatio: 0 }, { xRatio: 0.85, yRatio: 0 }, { xRatio: 0.85, yRatio: 1 }, { xRatio: 0.3, yRatio: 1 }])
    expect(polygonOf(' 0, 0; 1 ,0;0.5,1 ')).toEqual([{ xRatio: 0, yRatio: 0 }, { xRatio: 1, yRatio: 0 }, { xRatio: 0.5, yRatio: 1 }])
  })

  it('refuses fewer than 3 corners, values outside 0..1, and what is not a pair of numbers', () => {
    for (const text of ['', '0,0 1,1', '0,0 1,1 1.5,0', '0,0 1,1 x,0', '0,0 1,1 0,1,1', '0,0 1,1 0', '0,0 1,1 ,1'])
      expect(polygonOf(text), text).toBeNull()
  })
})
