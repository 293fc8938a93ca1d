/**
 * Fresh production secrets, in the formats lib/platform/config.ts accepts. They are kept apart
 * from the backups: without ENCRYPTION_KEY a restored database's sealed secrets cannot be read.
 */

/** Random bytes of JWT_SECRET: 48, above the 32 the config asks for. */
const JWT_SECRET_BYTES = 48;
/** ENCRYPTION_KEY is an AES-256 key: 32 bytes. */
const ENCRYPTION_KEY_BYTES = 32;

const randomBase64 = (bytes: number): string =>
  btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))));

/** A new JWT_SECRET and ENCRYPTION_KEY from WebCrypto's random source. */
export function generateSecrets(): { jwtSecret: string; encryptionKey: string } {
  return {
    jwtSecret: randomBase64(JWT_SECRET_BYTES),
    encryptionKey: randomBase64(ENCRYPTION_KEY_BYTES),
  };
}
