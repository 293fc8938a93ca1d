/** Credential and identity lookups on the hot path (raw SQL on the read connection), and key rotation. */
import type { Client } from "@libsql/client";
import { columnsOf, type RowMapper, rowMapper } from "../../db/rows.ts";
import { apiKeys, businessLines, companies } from "../../db/schema.ts";
import type { Environment } from "../platform/config.ts";
import { keyState } from "./credentials.ts";
import type { KeyKind } from "../platform/keys.ts";
import { constantTimeEqual, keyHint, newId, newKeySecret, sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { LineRef } from "./line_store.ts";

export interface StoredKey {
  readonly id: string;
  readonly kind: KeyKind;
  readonly companyId: string | null;
  readonly userId: string | null;
  readonly lineId: string | null;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
}

const key = columnsOf(apiKeys);
const toStoredKey: RowMapper<StoredKey> = rowMapper({
  id: key.id,
  kind: key.kind,
  companyId: key.companyId,
  userId: key.userId,
  lineId: key.lineId,
  expiresAt: key.expiresAt,
  revokedAt: key.revokedAt,
});
const toSecretHash = rowMapper({ secretHash: key.secretHash });
const toReplacedBy = rowMapper({ replacedBy: key.replacedBy });

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
    sql: `SELECT ${toStoredKey.columns.join(", ")}, secret_hash FROM api_keys
          WHERE secret_hash = ? AND kind = ?`,
    args: [hash, kind],
  });
  const row = rows[0];
  // The index found the row; compare the hashes again without an early exit.
  if (!row || !constantTimeEqual(toSecretHash(row).secretHash, hash)) return null;
  return toStoredKey(row);
}

export interface CompanyIdentity {
  readonly id: string;
  readonly name: string;
  readonly tin: string;
}

const company = columnsOf(companies);
const toCompany: RowMapper<CompanyIdentity> = rowMapper({
  id: company.id,
  name: company.name,
  tin: company.tin,
});

export async function findCompanyByTin(
  client: Client,
  tin: string,
): Promise<CompanyIdentity | null> {
  const { rows } = await client.execute({
    sql: `SELECT ${toCompany.columns.join(", ")} FROM companies WHERE tin = ?`,
    args: [tin],
  });
  return rows[0] ? toCompany(rows[0]) : null;
}

/** What a Surface A request is checked against, read in one statement. */
export interface CallerReads {
  /** The company key with the given hash, or null (none given, or none stored). */
  readonly companyKey: StoredKey | null;
  /** Whether the user belongs to the company acted for: the key's when a hash is given. */
  readonly member: boolean;
  /** That company's first business line, or null. */
  readonly firstLine: LineRef | null;
}

/**
 * The company key of `companyKeyHash` (when given), whether the user belongs to the company acted
 * for (the key's, else `companyId`) and that company's first line, in one statement: on a libSQL
 * server every read before the write unit is a round trip.
 */
export async function readCaller(
  client: Client,
  caller: { userId: string; companyId: string; companyKeyHash: string | null },
): Promise<CallerReads> {
  const { userId, companyId, companyKeyHash } = caller;
  const { rows } = await client.execute({
    sql: `WITH company_key AS (
            SELECT ${toStoredKey.columns.join(", ")}, secret_hash FROM api_keys
            WHERE secret_hash = ? AND kind = 'company'),
          chosen AS (
            SELECT CASE WHEN ? IS NULL THEN ? ELSE (SELECT company_id FROM company_key) END
              AS acting_company_id)
          SELECT company_key.*,
            EXISTS (SELECT 1 FROM memberships
                    WHERE user_id = ? AND company_id = chosen.acting_company_id) AS member,
            first_line.id AS first_line_id, first_line.code AS first_line_code
          FROM chosen
          LEFT JOIN company_key ON 1
          LEFT JOIN business_lines AS first_line ON first_line.id = (
            SELECT id FROM business_lines WHERE company_id = chosen.acting_company_id
            ORDER BY created_at, rowid LIMIT 1)`,
    args: [companyKeyHash, companyKeyHash, companyId, userId],
  });
  const row = rows[0];
  // The index found the key; compare the hashes again without an early exit.
  const keyFound = companyKeyHash !== null && row.id !== null &&
    constantTimeEqual(toSecretHash(row).secretHash, companyKeyHash);
  return {
    companyKey: keyFound ? toStoredKey(row) : null,
    member: Number(row.member) === 1,
    firstLine: row.first_line_id === null
      ? null
      : { id: String(row.first_line_id), code: String(row.first_line_code) },
  };
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

const line = columnsOf(businessLines);
const toLine: RowMapper<LineIdentity> = rowMapper({
  id: line.id,
  companyId: line.companyId,
  code: line.code,
});

export async function findLine(client: Client, lineId: string): Promise<LineIdentity | null> {
  const { rows } = await client.execute({
    sql: `SELECT ${toLine.columns.join(", ")} FROM business_lines WHERE id = ?`,
    args: [lineId],
  });
  return rows[0] ? toLine(rows[0]) : null;
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
    sql: `SELECT ${toStoredKey.columns.join(", ")}, replaced_by FROM api_keys WHERE id = ?`,
    args: [keyId],
  });
  if (!rows[0]) return refuse("key_not_found", `no key with id ${keyId}`);
  const stored = toStoredKey(rows[0]);
  const { replacedBy } = toReplacedBy(rows[0]);
  const state = keyState(stored, options.now);
  if (state !== "active") {
    return refuse("key_not_active", `key ${keyId} is ${state} and cannot be rotated`);
  }
  if (replacedBy !== null) {
    return refuse("key_already_rotated", `key ${keyId} was already replaced by ${replacedBy}`);
  }
  const kind = stored.kind;
  const secret = options.replacement?.secret ??
    newKeySecret(kind, options.environment ?? undefined);
  const id = options.replacement?.id ?? newId("key");
  const graceEnd = options.now + options.graceSeconds * 1000;
  const previousExpiresAt = stored.expiresAt === null
    ? graceEnd
    : Math.min(stored.expiresAt, graceEnd);
  await tx.execute({
    sql:
      `INSERT INTO api_keys (id, kind, secret_hash, hint, company_id, user_id, line_id, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    args: [
      id,
      kind,
      await sha256Hex(secret),
      keyHint(secret),
      stored.companyId,
      stored.userId,
      stored.lineId,
      options.now,
    ],
  });
  await tx.execute({
    sql: "UPDATE api_keys SET expires_at = ?, replaced_by = ? WHERE id = ?",
    args: [previousExpiresAt, id, keyId],
  });
  return ok({ id, secret, previousKeyId: keyId, previousExpiresAt });
}
