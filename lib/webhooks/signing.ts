/**
 * Webhook signatures (docs/contract.md §8), with WebCrypto HMAC-SHA256 under the 32 bytes a
 * `whsec_` secret encodes:
 * - `X-Signature: v1=t=<unix>,sha256=<hex>` over `<unix>.<raw body>`, one `sha256=` per valid
 *   secret while a secret is being rotated;
 * - the `signature` of a /v1 body: the same form over `<unix>.<JSON of {id, type, created, data}>`,
 *   with the header's `<unix>`;
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` over
 *   `<id>.<unix>.<raw body>`, space-separated per secret; for an endpoint that asks for it, also
 *   the asymmetric `v1a,<base64>`: the ed25519 signature of the same text, which a receiver checks
 *   with the service's public key (`whpk_`) and cannot forge.
 */
import { Buffer } from "node:buffer";
import { type KeyObject, sign } from "node:crypto";

/** Receivers should refuse signatures older (or newer) than this. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();

/** The HMAC key bytes of a `whsec_` secret. */
export function secretKeyBytes(secret: string): Uint8Array {
  if (!secret.startsWith("whsec_")) throw new Error("a webhook secret starts with whsec_");
  return Uint8Array.from(atob(secret.slice("whsec_".length)), (ch) => ch.charCodeAt(0));
}

/** Imported keys by secret bytes: a delivery burst signs with the same few secrets many times. */
const importedKeys = new Map<string, Promise<CryptoKey>>();
const IMPORTED_KEYS_MAX = 1000;

function hmacKey(key: Uint8Array): Promise<CryptoKey> {
  const id = String.fromCharCode(...key);
  let imported = importedKeys.get(id);
  if (!imported) {
    if (importedKeys.size >= IMPORTED_KEYS_MAX) {
      importedKeys.delete(importedKeys.keys().next().value!);
    }
    imported = crypto.subtle.importKey(
      "raw",
      key as BufferSource,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    importedKeys.set(id, imported);
  }
  return imported;
}

async function hmac(key: Uint8Array, message: string): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.sign("HMAC", await hmacKey(key), encoder.encode(message)),
  );
}

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** `v1=t=<ts>,sha256=<hex>[,sha256=<hex>…]` over `<ts>.<message>`, one digest per key. */
async function signatureOf(
  keys: readonly Uint8Array[],
  ts: string,
  message: string,
): Promise<string> {
  const digests = await Promise.all(
    keys.map(async (key) => `sha256=${hex(await hmac(key, `${ts}.${message}`))}`),
  );
  return `v1=t=${ts},${digests.join(",")}`;
}

/** What a /v1 body's `signature` covers: the envelope's four fields, in this order, no spaces. */
export interface SignedEnvelope {
  readonly id: unknown;
  readonly type: unknown;
  readonly created: unknown;
  readonly data: unknown;
}

const envelopeText = (e: SignedEnvelope) =>
  JSON.stringify({ id: e.id, type: e.type, created: e.created, data: e.data });

/** The `signature` of a /v1 body, signed with every valid secret at `timestampSeconds`. */
export function signEnvelope(
  input: { envelope: SignedEnvelope; secrets: readonly string[]; timestampSeconds: number },
): Promise<string> {
  return signatureOf(
    input.secrets.map(secretKeyBytes),
    String(input.timestampSeconds),
    envelopeText(input.envelope),
  );
}

/** The Standard Webhooks asymmetric signature (`v1a,<base64>`) of `<id>.<ts>.<body>`. */
export function signEd25519(
  input: { eventId: string; body: string; timestampSeconds: number; signingKey: KeyObject },
): string {
  const text = `${input.eventId}.${input.timestampSeconds}.${input.body}`;
  return `v1a,${sign(null, Buffer.from(text), input.signingKey).toString("base64")}`;
}

/**
 * The headers of one delivery attempt, signed with every valid secret, and with the ed25519 key
 * when the endpoint asks for the asymmetric signature too.
 */
export async function signDelivery(
  input: {
    eventId: string;
    body: string;
    secrets: readonly string[];
    timestampSeconds: number;
    ed25519Key?: KeyObject | null;
  },
): Promise<Record<string, string>> {
  const ts = String(input.timestampSeconds);
  const keys = input.secrets.map(secretKeyBytes);
  const standard = await Promise.all(
    keys.map(async (key) =>
      `v1,${base64(await hmac(key, `${input.eventId}.${ts}.${input.body}`))}`
    ),
  );
  if (input.ed25519Key) {
    standard.push(signEd25519({ ...input, signingKey: input.ed25519Key }));
  }
  return {
    "X-Signature": await signatureOf(keys, ts, input.body),
    "webhook-id": input.eventId,
    "webhook-timestamp": ts,
    "webhook-signature": standard.join(" "),
  };
}

function constantTimeEqualBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/**
 * For receivers: whether `X-Signature` signs `body` with `secret` within the tolerance of
 * `nowSeconds`. Compares in constant time; any one matching `sha256=` is enough.
 */
export async function verifySignature(
  input: {
    header: string;
    body: string;
    secret: string;
    nowSeconds: number;
    toleranceSeconds?: number;
  },
): Promise<boolean> {
  const match = /^v1=t=(\d+),(.+)$/.exec(input.header);
  if (!match) return false;
  const ts = Number(match[1]);
  if (Math.abs(input.nowSeconds - ts) > (input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) {
    return false;
  }
  const expected = encoder.encode(
    hex(await hmac(secretKeyBytes(input.secret), `${match[1]}.${input.body}`)),
  );
  let valid = false;
  for (const part of match[2].split(",")) {
    if (!part.startsWith("sha256=")) continue;
    valid = constantTimeEqualBytes(encoder.encode(part.slice("sha256=".length)), expected) || valid;
  }
  return valid;
}

/**
 * For receivers of /v1 webhooks: whether the body's `signature` signs its `{id, type, created,
 * data}` with `secret` within the tolerance of `nowSeconds` (the parsed body is enough).
 */
export function verifyEnvelopeSignature(
  input: {
    event: SignedEnvelope & { readonly signature?: unknown };
    secret: string;
    nowSeconds: number;
    toleranceSeconds?: number;
  },
): Promise<boolean> {
  return verifySignature({
    header: typeof input.event.signature === "string" ? input.event.signature : "",
    body: envelopeText(input.event),
    secret: input.secret,
    nowSeconds: input.nowSeconds,
    toleranceSeconds: input.toleranceSeconds,
  });
}
