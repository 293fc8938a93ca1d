/**
 * Operator passwords, hashed with argon2id (hash-wasm: WebAssembly, so it needs no FFI permission
 * and works in a compiled binary) at the OWASP minimum: 19 MiB of memory, 2 passes, 1 lane. The
 * stored value is the standard encoded string, which carries its parameters and salt.
 */

/** hash-wasm is loaded at the first sign-in or password change, not at every start. */
const loadHashWasm = () => import("hash-wasm");

const ARGON2_MEMORY_KIB = 19 * 1024;
const ARGON2_PASSES = 2;
const ARGON2_LANES = 1;
const ARGON2_HASH_BYTES = 32;
const SALT_BYTES = 16;

/** The argon2id string of a password, with a fresh salt. */
export async function hashPassword(password: string): Promise<string> {
  const { argon2id } = await loadHashWasm();
  return await argon2id({
    password,
    salt: crypto.getRandomValues(new Uint8Array(SALT_BYTES)),
    memorySize: ARGON2_MEMORY_KIB,
    iterations: ARGON2_PASSES,
    parallelism: ARGON2_LANES,
    hashLength: ARGON2_HASH_BYTES,
    outputType: "encoded",
  });
}

/** Whether the password matches the stored argon2id string (compared in constant time). */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const { argon2Verify } = await loadHashWasm();
  return await argon2Verify({ password, hash });
}

/**
 * A hash of no password, compared against when the e-mail is unknown, so that a sign-in takes as
 * long whether or not the operator exists.
 */
let decoy: Promise<string> | null = null;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(crypto.randomUUID());
  return decoy;
}
