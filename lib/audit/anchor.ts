/**
 * What anchors the audit log outside its database: the HMAC key of the chain, and the ed25519 key
 * that signs checkpoints, both derived from AUDIT_KEY (or ENCRYPTION_KEY) and never stored in the
 * database. Someone who can write the database but lacks the key cannot re-chain rows; a signed
 * checkpoint kept elsewhere (the backup copy destination) names each chain's last row at its
 * time, so a rewrite with the key, or a deleted tail, still shows.
 */
import { Buffer } from "node:buffer";
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  sign,
  verify,
} from "node:crypto";
import * as nodeCrypto from "node:crypto";
import { provideNodeCrypto } from "../platform/node_crypto.ts";
import { canonicalJson } from "./rules.ts";

// Every user of the chain's hash (lib/audit/rules.ts) comes after this module, which makes its
// keys: from here on that hash has Node's crypto without importing it on the start path.
provideNodeCrypto(nodeCrypto);

/** The keys of the audit log, derived once at the composition root. */
export interface AuditKeys {
  /** HMAC-SHA256 key of each row's hash. */
  readonly chainKey: Uint8Array;
  readonly signingKey: KeyObject;
  readonly publicKey: KeyObject;
  /** The key pair that signs the ledger's daily statements (lib/ledger/trial_balance.ts). */
  readonly ledgerStatements: Ed25519Keys;
}

/** PKCS #8 DER of an ed25519 private key, before its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

const derive = (material: Uint8Array, purpose: string): Uint8Array =>
  createHmac("sha256", material).update(purpose).digest();

/** An ed25519 key pair, the private half never stored. */
export interface Ed25519Keys {
  readonly signingKey: KeyObject;
  readonly publicKey: KeyObject;
}

/** The ed25519 key pair of a 32-byte seed (RFC 8410). */
export function ed25519KeysOfSeed(seed: Uint8Array): Ed25519Keys {
  if (seed.length !== 32) throw new Error("an ed25519 seed is 32 bytes");
  const signingKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  return { signingKey, publicKey: createPublicKey(signingKey) };
}

/**
 * An ed25519 key pair derived from key material kept outside the database (base64 of 32 bytes)
 * for one purpose: each purpose has its own key, and none is ever stored.
 */
export function ed25519KeysFrom(base64Key: string, purpose: string): Ed25519Keys {
  const material = Buffer.from(base64Key, "base64");
  if (material.length !== 32) throw new Error("the key must be 32 bytes in base64");
  return ed25519KeysOfSeed(derive(material, purpose));
}

/** The raw 32 bytes of an ed25519 public key. */
export function rawPublicKey(publicKey: KeyObject): Uint8Array {
  const spki = publicKey.export({ format: "der", type: "spki" }) as Buffer;
  return new Uint8Array(spki.subarray(spki.length - 32));
}

/** The audit keys from AUDIT_KEY, or ENCRYPTION_KEY when there is none (base64 of 32 bytes). */
export function auditKeysFrom(base64Key: string): AuditKeys {
  const material = Buffer.from(base64Key, "base64");
  if (material.length !== 32) throw new Error("the audit key must be 32 bytes in base64");
  return {
    chainKey: derive(material, "disbursements audit chain v1"),
    ...ed25519KeysFrom(base64Key, "disbursements audit checkpoint ed25519 v1"),
    ledgerStatements: ed25519KeysFrom(base64Key, "disbursements ledger statement ed25519 v1"),
  };
}

/** The checkpoint public key as text: `ed25519:` and the base64 of its 32 raw bytes. */
export function publicKeyText(publicKey: KeyObject): string {
  return `ed25519:${Buffer.from(rawPublicKey(publicKey)).toString("base64")}`;
}

/** The last row of each chain when a checkpoint was taken. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** A signed checkpoint, as written to a file. */
export interface AuditCheckpoint {
  readonly format: "audit-checkpoint/1";
  readonly created_at: string;
  readonly chains: { readonly live: ChainHead | null; readonly test: ChainHead | null };
  readonly public_key: string;
  readonly signature: string;
}

type Unsigned = Omit<AuditCheckpoint, "signature">;

/** A checkpoint of the chains' heads, signed. */
export function signCheckpoint(
  keys: AuditKeys,
  chains: AuditCheckpoint["chains"],
  now: number,
): AuditCheckpoint {
  const body: Unsigned = {
    format: "audit-checkpoint/1",
    created_at: new Date(now).toISOString(),
    chains,
    public_key: publicKeyText(keys.publicKey),
  };
  const signature = sign(null, Buffer.from(canonicalJson(body)), keys.signingKey);
  return { ...body, signature: signature.toString("base64") };
}

/** Whether a checkpoint was signed by this installation's key (its own public key is not trusted). */
export function checkpointSigned(keys: AuditKeys, checkpoint: AuditCheckpoint): boolean {
  const { signature, ...body } = checkpoint;
  if (typeof signature !== "string" || body.format !== "audit-checkpoint/1") return false;
  return verify(
    null,
    Buffer.from(canonicalJson(body)),
    keys.publicKey,
    Buffer.from(signature, "base64"),
  );
}

/** The file name of a checkpoint taken at `now`: sorts by time. */
export function checkpointFileName(now: number): string {
  return `audit-checkpoint-${
    new Date(now).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")
  }.json`;
}

export { currentAuditKeys, useAuditKeys } from "./keys_in_use.ts";
