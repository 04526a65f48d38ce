import { describe, expect, it } from 'vitest'
import { scrapeTokenAccepted } from '../../runtime/auth/scrape-token.ts'

describe('scrape token (METRICS_TOKEN)', () => {
  const token = 'k3y-0f-the-scraper_with.length'

  it('accepts exactly `Bearer <token>` (scheme in any case)', () => {
    expect(scrapeTokenAccepted(token, `Bearer ${token}`)).toBe(true)
    expect(scrapeTokenAccepted(token, `bearer ${token}`)).toBe(true)
    expect(scrapeTokenAccepted(token, `Bearer  ${token} `)).toBe(true)
  })

  it('refuses another token, a prefix, a longer one, another scheme or no header', () => {
    for (const header of [`Bearer ${token.slice(0, -1)}`, `Bearer ${token}x`, `Bearer ${token.toUpperCase()}`, `Basic ${token}`, token, `Bearer ${token} more`, 'Bearer ', '', undefined])
      expect(scrapeTokenAccepted(token, header), String(header)).toBe(false)
  })

  it('accepts nothing when no token is configured (mtk only)', () => {
    for (const header of ['Bearer ', 'Bearer x', `Bearer ${token}`, undefined]) expect(scrapeTokenAccepted('', header)).toBe(false)
  })
})
