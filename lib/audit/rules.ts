/**
 * The audit log's rules, pure: what a row holds, its canonical text and keyed hash chain, and the
 * masking that keeps secrets out of before and after. The hashes use Node's crypto, which the
 * keys' module (anchor.ts) provides: every hash comes after the chain's keys are made.
 */
import { loadedNodeCrypto } from "../platform/node_crypto.ts";

/** The first row of a database's chain chains from this fixed value. */
export const AUDIT_GENESIS_HASH = "0".repeat(64);

export type AuditEnvironment = "test" | "live";

/** One row as written; `before` and `after` are JSON text with secrets already masked. */
export interface AuditRow {
  readonly seq: number;
  readonly id: string;
  readonly at: number;
  readonly environment: AuditEnvironment;
  readonly operatorId: string | null;
  readonly operatorEmail: string | null;
  readonly origin: string;
  readonly action: string;
  readonly objectType: string;
  readonly objectId: string | null;
  readonly companyId: string | null;
  readonly before: string | null;
  readonly after: string | null;
  readonly prevHash: string;
  readonly hash: string;
}

/** JSON with object keys sorted at every depth: one text per value, whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`)}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function rowContent(row: Omit<AuditRow, "hash">): string {
  return canonicalJson({
    seq: row.seq,
    id: row.id,
    at: row.at,
    environment: row.environment,
    operator_id: row.operatorId,
    operator_email: row.operatorEmail,
    origin: row.origin,
    action: row.action,
    object_type: row.objectType,
    object_id: row.objectId,
    company_id: row.companyId,
    before: row.before,
    after: row.after,
    prev_hash: row.prevHash,
  });
}

/**
 * The HMAC-SHA256 (hex) of a row under the chain key: its previous row's hash and every other
 * column, canonically. Without the key, kept outside the database, nobody can re-chain rows.
 */
export function auditRowHash(row: Omit<AuditRow, "hash">, chainKey: Uint8Array): string {
  return loadedNodeCrypto().createHmac("sha256", chainKey).update(rowContent(row)).digest("hex");
}

/**
 * The unkeyed SHA-256 (hex) that chained rows written before the chain had a key. Such rows are
 * accepted only as the log's first rows, and only when the keyed marker below follows them.
 */
export function legacyAuditRowHash(row: Omit<AuditRow, "hash">): string {
  return loadedNodeCrypto().createHash("sha256").update(rowContent(row)).digest("hex");
}

/** Whether `row` is chained with legacyAuditRowHash, computed through WebCrypto. */
export async function isUnkeyedAuditRow(row: AuditRow): Promise<boolean> {
  const content = new TextEncoder().encode(rowContent(row));
  return new Uint8Array(await crypto.subtle.digest("SHA-256", content)).toHex() === row.hash;
}

/**
 * The action of the keyed row appended once, at the first start with the key, after a log whose
 * rows were chained unkeyed. Its `after` names how many rows came before it (`legacy_rows`); its
 * prev_hash, under the key, pins the last of them.
 */
export const CHAIN_KEYED_ACTION = "audit.chain_keyed";

/** What the chain-keyed marker records. */
export function chainKeyedMarker(legacyRows: number, at: number) {
  return {
    at,
    action: CHAIN_KEYED_ACTION,
    objectType: "audit_log",
    objectId: null,
    companyId: null,
    before: null,
    after: { legacy_rows: legacyRows },
  };
}

/** What is wrong with the first bad row of a chain, or null when the chain holds. */
export interface ChainBreak {
  readonly seq: number;
  readonly id: string;
  readonly reason: string;
}

/** Where a walk of the chain stands after a good row. */
export interface ChainPosition {
  readonly seq: number;
  readonly id: string;
  readonly hash: string;
  /** Rows chained unkeyed from the first row on (0 for a log that began keyed). */
  readonly legacyRows: number;
  /** Whether a keyed row has been seen: after one, an unkeyed row is a forgery. */
  readonly keyed: boolean;
}

/** One row checked: the first bad row, or where the chain stands after it. */
export type ChainStep =
  | { readonly broken: ChainBreak; readonly position?: undefined }
  | { readonly broken: null; readonly position: ChainPosition };

function legacyRowsNamed(after: string | null): number | null {
  if (after === null) return null;
  try {
    const value = (JSON.parse(after) as { legacy_rows?: unknown }).legacy_rows;
    return typeof value === "number" ? value : null;
  } catch {
    return null;
  }
}

/**
 * Checks one row against the chain before it (null for the first): the sequence has no gap, the
 * row names the previous row's hash, and its own hash matches its content under the key. Unkeyed
 * rows (an upgraded log) pass only as a prefix, before any keyed row; the first keyed row after
 * them must be the marker naming their count.
 */
export function checkChainLink(
  row: AuditRow,
  previous: ChainPosition | null,
  chainKey: Uint8Array,
): ChainStep {
  const fail = (reason: string): ChainStep => ({ broken: { seq: row.seq, id: row.id, reason } });
  const expectedSeq = previous === null ? 1 : previous.seq + 1;
  if (row.seq !== expectedSeq) {
    return fail(
      `row ${expectedSeq} is missing: the chain jumps from ${expectedSeq - 1} to ${row.seq}`,
    );
  }
  const expectedPrev = previous === null ? AUDIT_GENESIS_HASH : previous.hash;
  if (row.prevHash !== expectedPrev) {
    return fail("its prev_hash is not the hash of the row before it");
  }
  const legacyRows = previous?.legacyRows ?? 0;
  const keyed = previous?.keyed ?? false;
  const at = { seq: row.seq, id: row.id, hash: row.hash };
  if (auditRowHash(row, chainKey) === row.hash) {
    if (legacyRows > 0 && !keyed) {
      const named = legacyRowsNamed(row.after);
      if (row.action !== CHAIN_KEYED_ACTION || named !== legacyRows) {
        return fail(
          `it follows ${legacyRows} rows chained without the key but is not the ` +
            `${CHAIN_KEYED_ACTION} marker naming them`,
        );
      }
    }
    return { broken: null, position: { ...at, legacyRows, keyed: true } };
  }
  if (legacyAuditRowHash(row) === row.hash) {
    if (keyed) {
      return fail(
        "it is chained without the key after keyed rows: rows written since the key cannot be " +
          "unkeyed",
      );
    }
    return { broken: null, position: { ...at, legacyRows: legacyRows + 1, keyed: false } };
  }
  return fail("its content does not match its hash: the row was altered");
}

/**
 * What is wrong with a chain that ended at `last`: rows chained without the key that no keyed
 * marker follows could have been rewritten by anyone.
 */
export function checkChainEnd(last: ChainPosition | null): ChainBreak | null {
  if (last === null || last.keyed || last.legacyRows === 0) return null;
  return {
    seq: last.seq,
    id: last.id,
    reason: `the log ends on ${last.legacyRows} rows chained without the key, and no ` +
      `${CHAIN_KEYED_ACTION} marker follows them (start the service or the CLI with the key once)`,
  };
}

/** What replaces a secret in an audit row. */
export const MASKED = "[masked]";

/** Field names whose values are secrets, whatever they hold. */
const SECRET_FIELD =
  /password|secret|token|otpauth|(^|_)hash$|sealed|api_key|^key_(test|live)$|account_number|routing_number|card_number|^pan$/i;

/** Secret shapes, masked wherever they appear in text: keys, webhook secrets, TOTP URIs, hashes. */
const SECRET_TEXT = [
  /\bcak_[0-9A-Za-z]{32}\b/g,
  /\b(?:uak|sk)_(?:test|live)_[0-9A-Za-z]{43}\b/g,
  /\bwhsec_[A-Za-z0-9+/=]{40,}/g,
  /\bops_[0-9A-Za-z]{43}\b/g,
  /otpauth:\/\/\S+/g,
  /\$argon2(?:id|i|d)\$\S+/g,
];

/** A full account or card number (8 or more digits) keeps its last four only. */
const ACCOUNT_DIGITS = /^\d{8,19}$/;

function maskText(text: string): string {
  let masked = text;
  for (const pattern of SECRET_TEXT) masked = masked.replace(pattern, MASKED);
  return masked;
}

/**
 * A copy of a value fit for the audit log: fields named like secrets are masked whatever they
 * hold, secret shapes are masked inside any text, and account numbers keep their last four.
 */
export function maskSecrets(value: unknown, field = ""): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (SECRET_FIELD.test(field)) return MASKED;
  if (/account|card/i.test(field) && typeof value === "string" && ACCOUNT_DIGITS.test(value)) {
    return `…${value.slice(-4)}`;
  }
  if (typeof value === "string") return maskText(value);
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, field));
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [
        key,
        maskSecrets(item, key),
      ]),
    );
  }
  return value;
}
