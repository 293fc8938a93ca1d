/**
 * The audit log's use cases: a view of the databases whose every write unit also appends its
 * audit row (for operator commands whose use cases open their own units), listing with filters,
 * and verifying both chains.
 */
import type { Database } from "../../db/client.ts";
import type { GroupCommitWriter, WriteTx, WriteUnit } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { AuditRow, ChainBreak } from "./rules.ts";
import { appendAudit, type AuditActor, type AuditFilter, listAuditRows } from "./store.ts";
import { verifyAuditChain } from "./verify.ts";

type Databases = Readonly<Record<Environment, Database>>;

/** What a command changes, for the audit rows of the units it runs. */
export interface AuditedChange {
  readonly action: string;
  readonly objectType: string;
  readonly objectId: string | null;
  readonly companyId: string | null;
  /**
   * The object's state (non-secret columns), read inside each unit before and after it runs; a
   * unit that changed no row writes no audit row.
   */
  readonly snapshot?: (tx: WriteTx, environment: Environment) => Promise<unknown>;
}

async function totalChanges(tx: WriteTx): Promise<number> {
  const { rows } = await tx.execute("SELECT total_changes() AS n");
  return Number(rows[0].n);
}

function auditedDatabase(
  database: Database,
  actor: AuditActor,
  change: AuditedChange,
  now: number,
): Database {
  const write = <T>(unit: WriteUnit<T>): Promise<T> =>
    database.writer.write(async (tx) => {
      const before = await change.snapshot?.(tx, database.environment) ?? null;
      const changesBefore = await totalChanges(tx);
      const value = await unit(tx);
      if (await totalChanges(tx) === changesBefore) return value;
      const after = await change.snapshot?.(tx, database.environment) ?? null;
      await appendAudit(tx, database.environment, actor, {
        at: now,
        action: change.action,
        objectType: change.objectType,
        objectId: change.objectId,
        companyId: change.companyId,
        before,
        after,
      });
      return value;
    });
  // Everything but write is the writer's own, bound to it (its fields are private).
  const writer = new Proxy(database.writer, {
    get(target, property) {
      if (property === "write") return write;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as GroupCommitWriter;
  return { ...database, writer };
}

/**
 * The databases as a command sees them: each unit it writes also appends one audit row, in the
 * same unit, to the chain of the database it changed.
 */
export function auditedDatabases(
  databases: Databases,
  actor: AuditActor,
  change: AuditedChange,
  now: number,
): Databases {
  return {
    test: auditedDatabase(databases.test, actor, change, now),
    live: auditedDatabase(databases.live, actor, change, now),
  };
}

/** An audit row as operators read it: JSON parsed, times in ISO 8601. */
export function auditView(row: AuditRow) {
  return {
    environment: row.environment,
    seq: row.seq,
    id: row.id,
    at: new Date(row.at).toISOString(),
    operator: row.operatorEmail,
    operator_id: row.operatorId,
    origin: row.origin,
    action: row.action,
    object_type: row.objectType,
    object_id: row.objectId,
    company_id: row.companyId,
    before: row.before === null ? null : JSON.parse(row.before),
    after: row.after === null ? null : JSON.parse(row.after),
    hash: row.hash,
  };
}

/** Rows one listing shows by default, and at most. */
export const AUDIT_LISTED_DEFAULT = 100;
export const AUDIT_LISTED_MAX = 1000;

/** Rows of one or both environments matching the filter, newest first. */
export async function listAudit(
  databases: Databases,
  filter: AuditFilter & { environments: readonly Environment[] },
): Promise<ReturnType<typeof auditView>[]> {
  const rows: AuditRow[] = [];
  for (const environment of filter.environments) {
    rows.push(...await listAuditRows(databases[environment].readClient, filter));
  }
  rows.sort((a, b) => b.at - a.at || a.environment.localeCompare(b.environment) || b.seq - a.seq);
  return rows.slice(0, filter.limit).map(auditView);
}

/** Each chain's row count and its first bad row, if any. */
export async function verifyAudit(
  databases: Databases,
  environments: readonly Environment[],
): Promise<Record<string, { rows: number; broken: ChainBreak | null }>> {
  const report: Record<string, { rows: number; broken: ChainBreak | null }> = {};
  for (const environment of environments) {
    report[environment] = await verifyAuditChain(databases[environment].readClient);
  }
  return report;
}
