import { sql, type SQL } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'

/**
 * `column LIKE '%text%'` matching `text` literally: `%`, `_` and `\` are escaped, with the
 * explicit ESCAPE clause SQLite needs (drizzle's `like()` emits none, so a backslash would
 * not escape anything). Case-insensitive for ASCII, as SQLite's LIKE.
 */
export function containsText(column: SQLiteColumn, text: string): SQL {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  return sql`${column} like ${pattern} escape '\\'`
}
