/**
 * The audit_log table of one database: rows appended inside the write unit of the change they
 * record, and read back in pages. There is no update or delete here (triggers refuse both).
 */
import type { Client, InValue } from "@libsql/client";
import { columnsOf, rowMapper } from "../../db/rows.ts";
import { auditLog } from "../../db/schema.ts";
import type { WriteTx } from "../../db/writer.ts";
import { newId } from "../platform/keys.ts";
import { auditKeysInUse } from "./keys_in_use.ts";
import {
  AUDIT_GENESIS_HASH,
  type AuditEnvironment,
  type AuditRow,
  auditRowHash,
  canonicalJson,
  isUnkeyedAuditRow,
  maskSecrets,
} from "./rules.ts";

/** Who made a change and from where. */
export interface AuditActor {
  /** Null when no operator signed in: a dev-mode sandbox command on test data. */
  readonly operator: { readonly id: string; readonly email: string } | null;
  /** `cli`, or `http <address>` for the admin endpoint. */
  readonly origin: string;
}

/** One change to record. before and after are masked here, whatever the caller passes. */
export interface AuditEntry {
  readonly at: number;
  readonly action: string;
  readonly objectType: string;
  readonly objectId: string | null;
  readonly companyId: string | null;
  readonly before: unknown;
  readonly after: unknown;
}

const column = columnsOf(auditLog);
const toAuditRow: (row: Readonly<Record<string, unknown>>) => AuditRow = rowMapper({
  seq: column.seq,
  id: column.id,
  at: column.at,
  environment: column.environment,
  operatorId: column.operatorId,
  operatorEmail: column.operatorEmail,
  origin: column.origin,
  action: column.action,
  objectType: column.objectType,
  objectId: column.objectId,
  companyId: column.companyId,
  before: column.before,
  after: column.after,
  prevHash: column.prevHash,
  hash: column.hash,
});

const COLUMNS = "seq, id, at, environment, operator_id, operator_email, origin, action, " +
  "object_type, object_id, company_id, before, after, prev_hash, hash";

const jsonOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : canonicalJson(maskSecrets(value));

/**
 * Appends one row to the chain of the unit's database. The writer runs one unit at a time, so the
 * last row read here is still the last when this row is written.
 */
export async function appendAudit(
  tx: WriteTx,
  environment: AuditEnvironment,
  actor: AuditActor,
  entry: AuditEntry,
): Promise<AuditRow> {
  const { chainKey } = await auditKeysInUse();
  const { rows } = await tx.execute(
    "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1",
  );
  const previous = rows[0];
  const unhashed = {
    seq: previous ? Number(previous.seq) + 1 : 1,
    id: newId("aud"),
    at: entry.at,
    environment,
    operatorId: actor.operator?.id ?? null,
    operatorEmail: actor.operator?.email ?? null,
    origin: actor.origin,
    action: entry.action,
    objectType: entry.objectType,
    objectId: entry.objectId,
    companyId: entry.companyId,
    before: jsonOrNull(entry.before),
    after: jsonOrNull(entry.after),
    prevHash: previous ? String(previous.hash) : AUDIT_GENESIS_HASH,
  };
  const row: AuditRow = { ...unhashed, hash: auditRowHash(unhashed, chainKey) };
  await tx.execute({
    sql: `INSERT INTO audit_log (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    args: [
      row.seq,
      row.id,
      row.at,
      row.environment,
      row.operatorId,
      row.operatorEmail,
      row.origin,
      row.action,
      row.objectType,
      row.objectId,
      row.companyId,
      row.before,
      row.after,
      row.prevHash,
      row.hash,
    ],
  });
  return row;
}

/** The last `limit` rows of the chain, newest first. */
export async function lastAuditRows(client: Client, limit: number): Promise<AuditRow[]> {
  const { rows } = await client.execute({
    sql: `SELECT ${COLUMNS} FROM audit_log ORDER BY seq DESC LIMIT ?`,
    args: [limit],
  });
  return rows.map(toAuditRow);
}

/** The chain's last row as the unit sees it, or null for an empty log. */
export async function lastAuditRowIn(tx: WriteTx): Promise<AuditRow | null> {
  const { rows } = await tx.execute(`SELECT ${COLUMNS} FROM audit_log ORDER BY seq DESC LIMIT 1`);
  return rows[0] ? toAuditRow(rows[0]) : null;
}

/**
 * Whether the chain ends on a row chained without the key (a log written before the chain had
 * one, whose keyed marker is still to come). Through WebCrypto: the service asks before Node's
 * crypto has loaded.
 */
export async function chainEndsUnkeyed(client: Client): Promise<boolean> {
  const [last] = await lastAuditRows(client, 1);
  return last !== undefined && await isUnkeyedAuditRow(last);
}

/** Rows in chain order after `afterSeq`, at most `limit`. */
export async function auditRowsAfter(
  client: Client,
  afterSeq: number,
  limit: number,
): Promise<AuditRow[]> {
  const { rows } = await client.execute({
    sql: `SELECT ${COLUMNS} FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?`,
    args: [afterSeq, limit],
  });
  return rows.map(toAuditRow);
}

export interface AuditFilter {
  /** An operator's id, or e-mail. */
  readonly operator?: string;
  readonly action?: string;
  readonly objectId?: string;
  readonly since?: number;
  readonly until?: number;
  /** Only rows of these companies (an operator's scope); null: every row. */
  readonly companyIds: readonly string[] | null;
  readonly limit: number;
}

/** Rows matching the filter, newest first. */
export async function listAuditRows(client: Client, filter: AuditFilter): Promise<AuditRow[]> {
  const where: string[] = [];
  const args: InValue[] = [];
  if (filter.operator !== undefined) {
    where.push("(operator_id = ? OR operator_email = ?)");
    args.push(filter.operator, filter.operator.toLowerCase());
  }
  if (filter.action !== undefined) {
    where.push("action = ?");
    args.push(filter.action);
  }
  if (filter.objectId !== undefined) {
    where.push("object_id = ?");
    args.push(filter.objectId);
  }
  if (filter.since !== undefined) {
    where.push("at >= ?");
    args.push(filter.since);
  }
  if (filter.until !== undefined) {
    where.push("at < ?");
    args.push(filter.until);
  }
  if (filter.companyIds !== null) {
    where.push(`company_id IN (${filter.companyIds.map(() => "?").join(", ") || "NULL"})`);
    args.push(...filter.companyIds);
  }
  const { rows } = await client.execute({
    sql: `SELECT ${COLUMNS} FROM audit_log ${
      where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""
    } ORDER BY seq DESC LIMIT ?`,
    args: [...args, filter.limit],
  });
  return rows.map(toAuditRow);
}
