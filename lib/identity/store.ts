/** Credential and identity lookups on the hot path (raw SQL on the read connection), and key rotation. */
import type { Client } from "@libsql/client";
import type { Environment } from "../platform/config.ts";
import { keyState } from "./credentials.ts";
import type { KeyKind } from "../platform/keys.ts";
import { constantTimeEqual, keyHint, newId, newKeySecret, sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { WriteTx } from "../../db/writer.ts";

export interface StoredKey {
  readonly id: string;
  readonly kind: KeyKind;
  readonly companyId: string | null;
  readonly userId: string | null;
  readonly lineId: string | null;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
}

const nullableNumber = (value: unknown): number | null => value === null ? null : Number(value);

/** The stored key whose hash matches `secret`, of the expected kind, or null. */
export async function findKeyBySecret(
  client: Client,
  secret: string,
  kind: KeyKind,
): Promise<StoredKey | null> {
  return await findKeyByHash(client, await sha256Hex(secret), kind);
}

/** The stored key with this SHA-256 (hex) of its secret, of the expected kind, or null. */
export async function findKeyByHash(
  client: Client,
  hash: string,
  kind: KeyKind,
): Promise<StoredKey | null> {
  const { rows } = await client.execute({
    sql: `SELECT id, kind, secret_hash, company_id, user_id, line_id, expires_at, revoked_at
          FROM api_keys WHERE secret_hash = ? AND kind = ?`,
    args: [hash, kind],
  });
  const row = rows[0];
  // The index found the row; compare the hashes again without an early exit.
  if (!row || !constantTimeEqual(String(row.secret_hash), hash)) return null;
  return {
    id: String(row.id),
    kind: row.kind as KeyKind,
    companyId: row.company_id === null ? null : String(row.company_id),
    userId: row.user_id === null ? null : String(row.user_id),
    lineId: row.line_id === null ? null : String(row.line_id),
    expiresAt: nullableNumber(row.expires_at),
    revokedAt: nullableNumber(row.revoked_at),
  };
}

export interface CompanyIdentity {
  readonly id: string;
  readonly name: string;
  readonly tin: string;
}

export async function findCompanyByTin(
  client: Client,
  tin: string,
): Promise<CompanyIdentity | null> {
  const { rows } = await client.execute({
    sql: "SELECT id, name, tin FROM companies WHERE tin = ?",
    args: [tin],
  });
  return rows[0]
    ? { id: String(rows[0].id), name: String(rows[0].name), tin: String(rows[0].tin) }
    : null;
}

export async function isMember(
  client: Client,
  userId: string,
  companyId: string,
): Promise<boolean> {
  const { rows } = await client.execute({
    sql: "SELECT 1 FROM memberships WHERE user_id = ? AND company_id = ?",
    args: [userId, companyId],
  });
  return rows.length > 0;
}

export interface LineIdentity {
  readonly id: string;
  readonly companyId: string;
  readonly code: string;
}

export async function findLine(client: Client, lineId: string): Promise<LineIdentity | null> {
  const { rows } = await client.execute({
    sql: "SELECT id, company_id, code FROM business_lines WHERE id = ?",
    args: [lineId],
  });
  return rows[0]
    ? { id: String(rows[0].id), companyId: String(rows[0].company_id), code: String(rows[0].code) }
    : null;
}

export interface RotatedKey {
  readonly id: string;
  readonly secret: string;
  readonly previousKeyId: string;
  /** When the previous key stops working. */
  readonly previousExpiresAt: number;
}

/**
 * Replaces a key with a new one of the same kind, owner and environment inside one write unit;
 * the old key keeps working for `graceSeconds` (never longer than it already would).
 */
export async function rotateKeyInUnit(
  tx: WriteTx,
  keyId: string,
  options: {
    now: number;
    graceSeconds: number;
    environment: Environment | null;
    /** A company key is mirrored in both databases: both get the same replacement. */
    replacement?: { id: string; secret: string };
  },
): Promise<Result<RotatedKey, "key_not_found" | "key_not_active" | "key_already_rotated">> {
  const { rows } = await tx.execute({
    sql: `SELECT id, kind, company_id, user_id, line_id, expires_at, revoked_at, replaced_by
          FROM api_keys WHERE id = ?`,
    args: [keyId],
  });
  const row = rows[0];
  if (!row) return refuse("key_not_found", `no key with id ${keyId}`);
  const state = keyState(
    { expiresAt: nullableNumber(row.expires_at), revokedAt: nullableNumber(row.revoked_at) },
    options.now,
  );
  if (state !== "active") {
    return refuse("key_not_active", `key ${keyId} is ${state} and cannot be rotated`);
  }
  if (row.replaced_by !== null) {
    return refuse("key_already_rotated", `key ${keyId} was already replaced by ${row.replaced_by}`);
  }
  const kind = row.kind as KeyKind;
  const secret = options.replacement?.secret ??
    newKeySecret(kind, options.environment ?? undefined);
  const id = options.replacement?.id ?? newId("key");
  const graceEnd = options.now + options.graceSeconds * 1000;
  const previousExpiresAt = row.expires_at === null
    ? graceEnd
    : Math.min(Number(row.expires_at), graceEnd);
  await tx.execute({
    sql:
      `INSERT INTO api_keys (id, kind, secret_hash, hint, company_id, user_id, line_id, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    args: [
      id,
      kind,
      await sha256Hex(secret),
      keyHint(secret),
      row.company_id,
      row.user_id,
      row.line_id,
      options.now,
    ],
  });
  await tx.execute({
    sql: "UPDATE api_keys SET expires_at = ?, replaced_by = ? WHERE id = ?",
    args: [previousExpiresAt, id, keyId],
  });
  return ok({ id, secret, previousKeyId: keyId, previousExpiresAt });
}
