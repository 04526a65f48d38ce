/** A URL without its user info, and the user name and password it carried (decoded). */
export interface SplitUrl {
  url: string
  username: string | null
  password: string | null
}

/**
 * Splits the user info off a parsed URL (cameras, audio columns): the URL keeps no credential,
 * which are stored in their own fields and never returned or logged in full.
 */
export function splitCredentials(parsed: URL): SplitUrl {
  const username = parsed.username ? decodeURIComponent(parsed.username) : null
  const password = parsed.password ? decodeURIComponent(parsed.password) : null
  const bare = new URL(parsed.toString())
  bare.username = ''
  bare.password = ''
  return { url: bare.toString(), username, password }
}
