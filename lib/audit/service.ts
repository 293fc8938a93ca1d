/**
 * The audit log's use cases: a view of the databases whose every write unit also appends its
 * audit row (for operator commands whose use cases open their own units), listing with filters,
 * and verifying both chains.
 */
import type { Database } from "../../db/client.ts";
import type { GroupCommitWriter, WriteTx, WriteUnit } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import {
  type AuditRow,
  auditRowHash,
  type ChainBreak,
  chainKeyedMarker,
  legacyAuditRowHash,
} from "./rules.ts";
import {
  appendAudit,
  type AuditActor,
  type AuditFilter,
  auditRowsAfter,
  lastAuditRowIn,
  lastAuditRows,
  listAuditRows,
} from "./store.ts";
import {
  type AuditCheckpoint,
  checkpointFileName,
  checkpointSigned,
  currentAuditKeys,
  signCheckpoint,
} from "./anchor.ts";
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

/**
 * Keys a log written before the chain had a key: when a database's last audit row is chained with
 * the unkeyed SHA-256, appends the keyed `audit.chain_keyed` marker naming how many rows came
 * before it, in one unit. Run at every start with the key; a log already keyed is left as it is.
 * Returns the environments whose log it keyed.
 */
export async function keyLegacyAuditChains(
  databases: Databases,
  origin: string,
  now: number,
): Promise<Environment[]> {
  const keyed: Environment[] = [];
  for (const environment of ["live", "test"] as const) {
    const marked = await databases[environment].writer.write((tx) =>
      keyLegacyAuditChainIn(tx, environment, origin, now)
    );
    if (marked) keyed.push(environment);
  }
  return keyed;
}

/** keyLegacyAuditChains for the database of `tx`, in its unit: whether it appended the marker. */
export async function keyLegacyAuditChainIn(
  tx: WriteTx,
  environment: Environment,
  origin: string,
  now: number,
): Promise<boolean> {
  const last = await lastAuditRowIn(tx);
  if (last === null || auditRowHash(last, currentAuditKeys().chainKey) === last.hash) return false;
  // A last row that matches neither hash is left for audit:verify to name.
  if (legacyAuditRowHash(last) !== last.hash) return false;
  await appendAudit(tx, environment, { operator: null, origin }, chainKeyedMarker(last.seq, now));
  return true;
}

/** Each chain's row count and its first bad row, if any. */
export async function verifyAudit(
  databases: Databases,
  environments: readonly Environment[],
  checkpoints: readonly AuditCheckpoint[] = [],
): Promise<Record<string, { rows: number; broken: ChainBreak | null }>> {
  const report: Record<string, { rows: number; broken: ChainBreak | null }> = {};
  const { chainKey } = currentAuditKeys();
  for (const environment of environments) {
    const client = databases[environment].readClient;
    const chain = await verifyAuditChain(client, chainKey);
    report[environment] = chain.broken === null
      ? {
        rows: chain.rows,
        broken: await checkAgainstCheckpoints(client, environment, checkpoints),
      }
      : chain;
  }
  return report;
}

/**
 * The first way a chain differs from what signed checkpoints saw: a row a checkpoint named that
 * is gone (a deleted tail) or holds another hash (a rewrite, even by someone with the key).
 */
async function checkAgainstCheckpoints(
  client: Database["readClient"],
  environment: Environment,
  checkpoints: readonly AuditCheckpoint[],
): Promise<ChainBreak | null> {
  const last = (await lastAuditRows(client, 1))[0] ?? null;
  for (const checkpoint of checkpoints) {
    const head = checkpoint.chains[environment];
    if (head === null) continue;
    const [row] = await auditRowsAfter(client, head.seq - 1, 1);
    if (!row || row.seq !== head.seq) {
      return {
        seq: head.seq,
        id: "",
        reason:
          `the checkpoint of ${checkpoint.created_at} saw row ${head.seq}, but the log ends ` +
          `at row ${last?.seq ?? 0}: its tail was deleted`,
      };
    }
    if (row.hash !== head.hash) {
      return {
        seq: row.seq,
        id: row.id,
        reason: `its hash differs from the one the checkpoint of ${checkpoint.created_at} ` +
          "signed: the log was rewritten",
      };
    }
  }
  return null;
}

/** A signed checkpoint of both chains' last rows now. */
export async function takeAuditCheckpoint(
  databases: Databases,
  now: number,
): Promise<AuditCheckpoint> {
  const head = async (environment: Environment) => {
    const [row] = await lastAuditRows(databases[environment].readClient, 1);
    return row ? { seq: row.seq, hash: row.hash } : null;
  };
  return signCheckpoint(
    currentAuditKeys(),
    { live: await head("live"), test: await head("test") },
    now,
  );
}

/** Writes a checkpoint into `dir` (mode 0600, whole or absent) and returns its path. */
export async function writeAuditCheckpoint(
  dir: string,
  checkpoint: AuditCheckpoint,
): Promise<string> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = `${dir}/${checkpointFileName(Date.parse(checkpoint.created_at))}`;
  await Deno.writeTextFile(`${path}.partial`, JSON.stringify(checkpoint, null, 2) + "\n", {
    mode: 0o600,
  });
  await Deno.rename(`${path}.partial`, path);
  return path;
}

/** Checkpoint files a directory may hold at most, read by one verification. */
export const AUDIT_CHECKPOINTS_READ_MAX = 10_000;

/**
 * The checkpoints of a directory, oldest first; a file that is not one signed by this
 * installation's key is named in `refused`.
 */
export async function readAuditCheckpoints(
  dir: string,
): Promise<{ checkpoints: AuditCheckpoint[]; refused: string[] }> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && /^audit-checkpoint-.*\.json$/.test(entry.name)) names.push(entry.name);
    if (names.length > AUDIT_CHECKPOINTS_READ_MAX) {
      throw new Error(`${dir} holds over ${AUDIT_CHECKPOINTS_READ_MAX} checkpoints`);
    }
  }
  const keys = currentAuditKeys();
  const checkpoints: AuditCheckpoint[] = [];
  const refused: string[] = [];
  for (const name of names.sort()) {
    let parsed: AuditCheckpoint | null = null;
    try {
      parsed = JSON.parse(await Deno.readTextFile(`${dir}/${name}`)) as AuditCheckpoint;
    } catch {
      parsed = null;
    }
    if (parsed !== null && checkpointSigned(keys, parsed)) checkpoints.push(parsed);
    else refused.push(name);
  }
  return { checkpoints, refused };
}
