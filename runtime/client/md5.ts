import { md5 } from '@noble/hashes/legacy.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

/**
 * spec 4.1, 5.8: the password travels as the 32-hex MD5 digest of its UTF-8 bytes. A pure
 * implementation, since browsers offer no MD5 (and no WebCrypto off secure contexts).
 */
export const md5Hex = (text: string): string => bytesToHex(md5(utf8ToBytes(text)))
