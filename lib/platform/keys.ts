/**
 * Credential formats (contract §3). Secrets are random (>= 32 bytes of entropy), shown once, kept
 * only as SHA-256 and compared in constant time.
 */
import type { Environment } from "./config.ts";
import { loadNodeCrypto } from "./node_crypto.ts";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** 43 base62 characters carry 256 bits; `cak_` keys use 32 as the contract fixes. */
const SECRET_LENGTH = 43;
const COMPANY_KEY_LENGTH = 32;

export type KeyKind = "company" | "user" | "line";

/** Random base62 text of `length` characters, without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const byte of bytes) {
      // 248 = 4 * 62: bytes above it would favour the first characters.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A new secret of the given kind; user and line keys name their environment. */
export function newKeySecret(kind: KeyKind, environment?: Environment): string {
  switch (kind) {
    case "company":
      return `cak_${randomBase62(COMPANY_KEY_LENGTH)}`;
    case "user":
      return `uak_${requireEnvironment(environment)}_${randomBase62(SECRET_LENGTH)}`;
    case "line":
      return `sk_${requireEnvironment(environment)}_${randomBase62(SECRET_LENGTH)}`;
  }
}

function requireEnvironment(environment: Environment | undefined): Environment {
  if (environment !== "test" && environment !== "live") {
    throw new Error(`a user or line key needs an environment, got ${environment}`);
  }
  return environment;
}

export interface ParsedKey {
  readonly kind: KeyKind;
  readonly environment: Environment | null;
}

const KEY_PATTERN = /^(?:(cak)_[0-9A-Za-z]{32}|(uak|sk)_(test|live)_[0-9A-Za-z]{43})$/;

/** Recognizes a credential's kind and environment from its shape alone, or null. */
export function parseKey(secret: string): ParsedKey | null {
  const match = KEY_PATTERN.exec(secret);
  if (!match) return null;
  if (match[1]) return { kind: "company", environment: null };
  return { kind: match[2] === "uak" ? "user" : "line", environment: match[3] as Environment };
}

/** The non-secret start of a key, for operators to recognize it. */
export function keyHint(secret: string): string {
  const prefixEnd = secret.startsWith("cak_")
    ? 4
    : secret.indexOf("_", secret.indexOf("_") + 1) + 1;
  return `${secret.slice(0, prefixEnd + 4)}…`;
}

/**
 * Hex SHA-256 of text. Node's synchronous hash, not crypto.subtle.digest: a request hashes two or
 * three short texts, and the asynchronous digest cost about 12 % of a create's CPU (issue 33).
 */
export async function sha256Hex(text: string | Uint8Array): Promise<string> {
  const { createHash } = await loadNodeCrypto();
  return createHash("sha256").update(text).digest("hex");
}

/** Hex HMAC-SHA256 of `text` under `key`. */
export async function hmacSha256Hex(key: string, text: string): Promise<string> {
  const { createHmac } = await loadNodeCrypto();
  return createHmac("sha256", key).update(text).digest("hex");
}

/** Compares two strings without an early exit on the first difference. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  let diff = left.length ^ right.length;
  const length = Math.max(left.length, right.length);
  for (let i = 0; i < length; i++) diff |= (left[i] ?? 0) ^ (right[i] ?? 0);
  return diff === 0;
}

/** Milliseconds in 8 base62 characters: sortable as text until the year 8888. */
function base62Time(ms: number): string {
  let out = "";
  for (let rest = ms, i = 0; i < 8; i++, rest = Math.floor(rest / 62)) {
    out = BASE62[rest % 62] + out;
  }
  return out;
}

/**
 * Prefixed object id, e.g. `co_…`, `po_…`, `evt_…`: 8 characters of creation time, then 14
 * random (83 bits, so ids stay unguessable). Ids made later sort later, so a table's and its
 * indexes' new rows go to the same last pages: a group commit writes a few pages instead of one
 * page per row.
 */
export function newId(prefix: string): string {
  return `${prefix}_${base62Time(Date.now())}${idRandom(ID_RANDOM_LENGTH)}`;
}

const ID_RANDOM_LENGTH = 14;

/**
 * Random bytes for ids, drawn 4 KiB at a time and each used once: a `getRandomValues` call per id
 * cost about 1 µs of the 1.3 µs an id took, and a create makes about ten ids. Secrets draw their
 * own bytes (randomBase62), so none of theirs waits in memory.
 */
const idBytes = new Uint8Array(4096);
let idByteAt = idBytes.length;

/** Random base62 text for an id, from idBytes, without modulo bias. */
function idRandom(length: number): string {
  let out = "";
  while (out.length < length) {
    if (idByteAt === idBytes.length) {
      crypto.getRandomValues(idBytes);
      idByteAt = 0;
    }
    const byte = idBytes[idByteAt++];
    // 248 = 4 * 62: bytes above it would favour the first characters.
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}
