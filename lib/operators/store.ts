/**
 * The SQL of operators, their sessions and approvals (all in the live database), typed rows in
 * and out. Reads that decide a write take the unit's `tx`; listings take the read client.
 */
import type { InStatement, ResultSet } from "@libsql/client";
import { columnsOf, json, rowMapper } from "../../db/rows.ts";
import { approvals, operatorEnrollments, operators, operatorSessions } from "../../db/schema.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { ApprovalStatus, Role } from "./rules.ts";

/** A write unit or the read client: both run SQL. */
export interface Sql {
  execute(statement: InStatement): Promise<ResultSet>;
}

export interface OperatorRecord {
  readonly id: string;
  readonly email: string;
  readonly role: Role;
  /** Company ids the operator is limited to; null: every company. */
  readonly companyScope: string[] | null;
  readonly passwordHash: string;
  readonly totpSecretSealed: string | null;
  readonly totpLastStep: number | null;
  readonly failedAttempts: number;
  readonly lockedUntil: number | null;
  readonly disabledAt: number | null;
  readonly createdBy: string | null;
  readonly createdAt: number;
}

const operator = columnsOf(operators);
const OPERATOR_COLUMNS = "id, email, role, company_scope, password_hash, totp_secret_sealed, " +
  "totp_last_step, failed_attempts, locked_until, disabled_at, created_by, created_at";
const toOperator: (row: Readonly<Record<string, unknown>>) => OperatorRecord = rowMapper({
  id: operator.id,
  email: operator.email,
  role: operator.role,
  companyScope: json<string[], string | null>(operator.companyScope, "array"),
  passwordHash: operator.passwordHash,
  totpSecretSealed: operator.totpSecretSealed,
  totpLastStep: operator.totpLastStep,
  failedAttempts: operator.failedAttempts,
  lockedUntil: operator.lockedUntil,
  disabledAt: operator.disabledAt,
  createdBy: operator.createdBy,
  createdAt: operator.createdAt,
});

export async function countOperators(sql: Sql): Promise<number> {
  const { rows } = await sql.execute("SELECT count(*) AS n FROM operators");
  return Number(rows[0].n);
}

export async function findOperatorByEmail(
  sql: Sql,
  email: string,
): Promise<OperatorRecord | null> {
  const { rows } = await sql.execute({
    sql: `SELECT ${OPERATOR_COLUMNS} FROM operators WHERE email = ?`,
    args: [email.toLowerCase()],
  });
  return rows[0] ? toOperator(rows[0]) : null;
}

export async function findOperatorById(sql: Sql, id: string): Promise<OperatorRecord | null> {
  const { rows } = await sql.execute({
    sql: `SELECT ${OPERATOR_COLUMNS} FROM operators WHERE id = ?`,
    args: [id],
  });
  return rows[0] ? toOperator(rows[0]) : null;
}

export async function listOperatorRecords(sql: Sql): Promise<OperatorRecord[]> {
  const { rows } = await sql.execute(
    `SELECT ${OPERATOR_COLUMNS} FROM operators ORDER BY created_at, email`,
  );
  return rows.map(toOperator);
}

/** Active admins whose scope is every company: the ones who can manage operators. */
export async function countActiveFullAdmins(sql: Sql): Promise<number> {
  const { rows } = await sql.execute(
    `SELECT count(*) AS n FROM operators
      WHERE role = 'admin' AND disabled_at IS NULL AND company_scope IS NULL`,
  );
  return Number(rows[0].n);
}

export interface NewOperator {
  readonly id: string;
  readonly email: string;
  readonly role: Role;
  readonly companyScope: readonly string[] | null;
  readonly passwordHash: string;
  readonly totpSecretSealed: string | null;
  readonly createdBy: string | null;
}

export async function insertOperator(tx: WriteTx, row: NewOperator, now: number): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO operators (id, email, role, company_scope, password_hash,
            totp_secret_sealed, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    args: [
      row.id,
      row.email.toLowerCase(),
      row.role,
      row.companyScope === null ? null : JSON.stringify(row.companyScope),
      row.passwordHash,
      row.totpSecretSealed,
      row.createdBy,
      now,
    ],
  });
}

/** Records a failed sign-in: the new count, and the lock when the count reached the limit. */
export async function recordSignInFailure(
  tx: WriteTx,
  operatorId: string,
  counters: { failedAttempts: number; lockedUntil: number | null },
): Promise<void> {
  await tx.execute({
    sql: "UPDATE operators SET failed_attempts = ?, locked_until = ? WHERE id = ?",
    args: [counters.failedAttempts, counters.lockedUntil, operatorId],
  });
}

/** Records a sign-in: the failures forgotten, and the TOTP step used (so it is not used twice). */
export async function recordSignInSuccess(
  tx: WriteTx,
  operatorId: string,
  totpStep: number | null,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE operators SET failed_attempts = 0, locked_until = NULL,
            totp_last_step = coalesce(?, totp_last_step) WHERE id = ?`,
    args: [totpStep, operatorId],
  });
}

export async function setOperatorDisabled(
  tx: WriteTx,
  operatorId: string,
  now: number,
): Promise<void> {
  await tx.execute({
    sql: "UPDATE operators SET disabled_at = ? WHERE id = ?",
    args: [now, operatorId],
  });
}

/**
 * New credentials: a new password and TOTP secret (or none, for an operator waiting to enrol),
 * the counters and the lock cleared.
 */
export async function setOperatorCredentials(
  tx: WriteTx,
  operatorId: string,
  credentials: { passwordHash: string; totpSecretSealed: string | null },
): Promise<void> {
  await tx.execute({
    sql: `UPDATE operators SET password_hash = ?, totp_secret_sealed = ?, totp_last_step = NULL,
            failed_attempts = 0, locked_until = NULL WHERE id = ?`,
    args: [credentials.passwordHash, credentials.totpSecretSealed, operatorId],
  });
}

export interface SessionRecord {
  readonly id: string;
  readonly operatorId: string;
  readonly totpVerified: boolean;
  readonly expiresAt: number;
  readonly absoluteExpiresAt: number;
  readonly endedAt: number | null;
  readonly createdAt: number;
}

const session = columnsOf(operatorSessions);
const SESSION_COLUMNS =
  "id, operator_id, totp_verified, expires_at, absolute_expires_at, ended_at, created_at";
const toSession: (row: Readonly<Record<string, unknown>>) => SessionRecord = rowMapper({
  id: session.id,
  operatorId: session.operatorId,
  totpVerified: session.totpVerified,
  expiresAt: session.expiresAt,
  absoluteExpiresAt: session.absoluteExpiresAt,
  endedAt: session.endedAt,
  createdAt: session.createdAt,
});

export async function insertSession(
  tx: WriteTx,
  row: Omit<SessionRecord, "endedAt" | "createdAt"> & { tokenHash: string },
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO operator_sessions (id, token_hash, operator_id, totp_verified, expires_at,
            absolute_expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    args: [
      row.id,
      row.tokenHash,
      row.operatorId,
      row.totpVerified ? 1 : 0,
      row.expiresAt,
      row.absoluteExpiresAt,
      now,
    ],
  });
}

export async function findSessionByTokenHash(
  sql: Sql,
  tokenHash: string,
): Promise<SessionRecord | null> {
  const { rows } = await sql.execute({
    sql: `SELECT ${SESSION_COLUMNS} FROM operator_sessions WHERE token_hash = ?`,
    args: [tokenHash],
  });
  return rows[0] ? toSession(rows[0]) : null;
}

/** Moves an active session's idle expiry forward. */
export async function extendSession(
  tx: WriteTx,
  sessionId: string,
  expiresAt: number,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE operator_sessions SET expires_at = max(expires_at, ?)
           WHERE id = ? AND ended_at IS NULL`,
    args: [expiresAt, sessionId],
  });
}

export async function endSession(tx: WriteTx, sessionId: string, now: number): Promise<void> {
  await tx.execute({
    sql: "UPDATE operator_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL",
    args: [now, sessionId],
  });
}

/** Ends every open session of an operator (disabled, or given new credentials). */
export async function endSessionsOf(tx: WriteTx, operatorId: string, now: number): Promise<number> {
  const ended = await tx.execute({
    sql: "UPDATE operator_sessions SET ended_at = ? WHERE operator_id = ? AND ended_at IS NULL",
    args: [now, operatorId],
  });
  return ended.rowsAffected;
}

export interface ApprovalRecord {
  readonly id: string;
  readonly kind: string;
  readonly environment: Environment;
  readonly companyId: string | null;
  readonly objectId: string;
  readonly summary: string;
  /** JSON object; the secrets in it are sealed. */
  readonly payload: Record<string, unknown>;
  readonly status: ApprovalStatus;
  readonly requestedBy: string;
  readonly requestedAt: number;
  readonly expiresAt: number;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  readonly outcome: string | null;
}

const approval = columnsOf(approvals);
const APPROVAL_COLUMNS = "id, kind, environment, company_id, object_id, summary, payload, " +
  "status, requested_by, requested_at, expires_at, decided_by, decided_at, outcome";
const toApproval: (row: Readonly<Record<string, unknown>>) => ApprovalRecord = rowMapper({
  id: approval.id,
  kind: approval.kind,
  environment: approval.environment,
  companyId: approval.companyId,
  objectId: approval.objectId,
  summary: approval.summary,
  payload: json<Record<string, unknown>>(approval.payload, "object"),
  status: approval.status,
  requestedBy: approval.requestedBy,
  requestedAt: approval.requestedAt,
  expiresAt: approval.expiresAt,
  decidedBy: approval.decidedBy,
  decidedAt: approval.decidedAt,
  outcome: approval.outcome,
});

export async function insertApproval(
  tx: WriteTx,
  row: Omit<ApprovalRecord, "status" | "decidedBy" | "decidedAt" | "outcome">,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO approvals (id, kind, environment, company_id, object_id, summary, payload,
            status, requested_by, requested_at, expires_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, 'pending_approval', ?, ?, ?)`,
    args: [
      row.id,
      row.kind,
      row.environment,
      row.companyId,
      row.objectId,
      row.summary,
      JSON.stringify(row.payload),
      row.requestedBy,
      row.requestedAt,
      row.expiresAt,
    ],
  });
}

export async function findApproval(sql: Sql, id: string): Promise<ApprovalRecord | null> {
  const { rows } = await sql.execute({
    sql: `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = ?`,
    args: [id],
  });
  return rows[0] ? toApproval(rows[0]) : null;
}

/** Pending approvals of a kind and object: an action asked for twice waits once. */
export async function findPendingApproval(
  sql: Sql,
  kind: string,
  objectId: string,
): Promise<ApprovalRecord | null> {
  const { rows } = await sql.execute({
    sql: `SELECT ${APPROVAL_COLUMNS} FROM approvals
           WHERE kind = ? AND object_id = ? AND status = 'pending_approval'`,
    args: [kind, objectId],
  });
  return rows[0] ? toApproval(rows[0]) : null;
}

/** Pending approvals whose time ran out by `now`. */
export async function lapsedApprovals(sql: Sql, now: number): Promise<ApprovalRecord[]> {
  const { rows } = await sql.execute({
    sql: `SELECT ${APPROVAL_COLUMNS} FROM approvals
           WHERE status = 'pending_approval' AND expires_at <= ? ORDER BY expires_at`,
    args: [now],
  });
  return rows.map(toApproval);
}

/** Marks a pending approval decided; false when it was no longer pending. */
export async function decideApproval(
  tx: WriteTx,
  id: string,
  decision: {
    status: Exclude<ApprovalStatus, "pending_approval">;
    decidedBy: string | null;
    outcome: string | null;
  },
  now: number,
): Promise<boolean> {
  const updated = await tx.execute({
    sql: `UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, outcome = ?
           WHERE id = ? AND status = 'pending_approval'`,
    args: [decision.status, decision.decidedBy, now, decision.outcome, id],
  });
  return updated.rowsAffected === 1;
}

/** Approvals, newest first, optionally of one status; `limit` at most. */
export async function listApprovalRecords(
  sql: Sql,
  filter: { status: ApprovalStatus | null; limit: number },
): Promise<ApprovalRecord[]> {
  const { rows } = await sql.execute({
    sql: `SELECT ${APPROVAL_COLUMNS} FROM approvals ${
      filter.status === null ? "" : "WHERE status = ?"
    } ORDER BY requested_at DESC, id DESC LIMIT ?`,
    args: filter.status === null ? [filter.limit] : [filter.status, filter.limit],
  });
  return rows.map(toApproval);
}

/** A new password only: the TOTP secret and its last step stay. */
export async function setOperatorPassword(
  tx: WriteTx,
  operatorId: string,
  passwordHash: string,
): Promise<void> {
  await tx.execute({
    sql: "UPDATE operators SET password_hash = ? WHERE id = ?",
    args: [passwordHash, operatorId],
  });
}

export async function setOperatorRole(tx: WriteTx, operatorId: string, role: Role): Promise<void> {
  await tx.execute({ sql: "UPDATE operators SET role = ? WHERE id = ?", args: [role, operatorId] });
}

/** Active admins of any scope. */
export async function countActiveAdmins(sql: Sql): Promise<number> {
  const { rows } = await sql.execute(
    "SELECT count(*) AS n FROM operators WHERE role = 'admin' AND disabled_at IS NULL",
  );
  return Number(rows[0].n);
}

export interface EnrollmentRecord {
  readonly id: string;
  readonly operatorId: string;
  readonly purpose: "invite" | "reset";
  readonly expiresAt: number;
  readonly usedAt: number | null;
  readonly replacedAt: number | null;
  readonly createdAt: number;
}

const enrollment = columnsOf(operatorEnrollments);
const ENROLLMENT_COLUMNS = "id, operator_id, purpose, expires_at, used_at, replaced_at, created_at";
const toEnrollment: (row: Readonly<Record<string, unknown>>) => EnrollmentRecord = rowMapper({
  id: enrollment.id,
  operatorId: enrollment.operatorId,
  purpose: enrollment.purpose,
  expiresAt: enrollment.expiresAt,
  usedAt: enrollment.usedAt,
  replacedAt: enrollment.replacedAt,
  createdAt: enrollment.createdAt,
});

/** A new enrollment code of an operator; the earlier unused ones stop working. */
export async function insertEnrollment(
  tx: WriteTx,
  row: {
    id: string;
    operatorId: string;
    codeHash: string;
    purpose: "invite" | "reset";
    expiresAt: number;
  },
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE operator_enrollments SET replaced_at = ?
            WHERE operator_id = ? AND used_at IS NULL AND replaced_at IS NULL`,
    args: [now, row.operatorId],
  });
  await tx.execute({
    sql: `INSERT INTO operator_enrollments (id, operator_id, code_hash, purpose, expires_at,
            created_at) VALUES (?, ?, ?, ?, ?, ?)`,
    args: [row.id, row.operatorId, row.codeHash, row.purpose, row.expiresAt, now],
  });
}

export async function findEnrollmentByCodeHash(
  sql: Sql,
  codeHash: string,
): Promise<EnrollmentRecord | null> {
  const { rows } = await sql.execute({
    sql: `SELECT ${ENROLLMENT_COLUMNS} FROM operator_enrollments WHERE code_hash = ?`,
    args: [codeHash],
  });
  return rows[0] ? toEnrollment(rows[0]) : null;
}

/** Marks an enrollment used; false when it was used or replaced already. */
export async function useEnrollment(tx: WriteTx, id: string, now: number): Promise<boolean> {
  const { rowsAffected } = await tx.execute({
    sql: `UPDATE operator_enrollments SET used_at = ?
            WHERE id = ? AND used_at IS NULL AND replaced_at IS NULL`,
    args: [now, id],
  });
  return rowsAffected === 1;
}
