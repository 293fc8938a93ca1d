/** What an operator asks of the running service besides its commands: is each database ready. */
import { type Database, migrationsPending } from "../../db/client.ts";

/** Why the service says it is not ready; each has its own /metrics sample. */
export const NOT_READY_REASONS = [
  "writes_failing",
  "disk_full",
  "migrations_pending",
  "worker_stalled",
] as const;
export type NotReadyReason = (typeof NOT_READY_REASONS)[number];

/**
 * Whether the database answers with every migration applied and takes writes, and what it says.
 * While its writer's recent commits fail (a full disk, an I/O error, a read-only file), a probe
 * write is tried first: readiness comes back by itself once the storage takes writes again.
 */
export async function databaseReadiness(
  database: Database,
): Promise<{ ready: boolean; check: string; reason: NotReadyReason | null }> {
  try {
    await database.readClient.execute("SELECT 1");
    const pending = await migrationsPending(database);
    if (pending > 0) {
      return {
        ready: false,
        check: `${pending} migrations not applied`,
        reason: "migrations_pending",
      };
    }
  } catch (error) {
    return {
      ready: false,
      check: `database unreachable: ${error instanceof Error ? error.message : error}`,
      reason: "writes_failing",
    };
  }
  await database.writer.probeWrites();
  const failure = database.writer.failure;
  if (failure === null) return { ready: true, check: "ok", reason: null };
  return {
    ready: false,
    check: `${failure.reason}: writes fail since ${
      new Date(failure.since).toISOString()
    }: ${failure.message}`,
    reason: failure.reason,
  };
}

export interface ReadinessOptions {
  /** The worker loops whose sweep has run longer than WORKER_STALL_MS. */
  readonly stalledWorkers?: () => readonly string[];
}

/** What /readyz answers: 200 ready, or 503 with every reason found. */
export interface Readiness {
  readonly status: 200 | 503;
  readonly body: {
    status: "ready" | "not_ready";
    reason?: NotReadyReason;
    reasons?: NotReadyReason[];
    databases: Record<string, string>;
    stalled_workers?: string[];
  };
}

/** /readyz's answer: ready when every database is and no worker loop is stuck. */
export async function serviceReadiness(
  databases: Readonly<Record<string, Database>>,
  options: ReadinessOptions = {},
): Promise<Readiness> {
  const checks: Record<string, string> = {};
  const reasons = new Set<NotReadyReason>();
  for (const [environment, database] of Object.entries(databases)) {
    const readiness = await databaseReadiness(database);
    checks[environment] = readiness.check;
    if (readiness.reason !== null) reasons.add(readiness.reason);
  }
  const stalled = [...(options.stalledWorkers?.() ?? [])];
  if (stalled.length > 0) reasons.add("worker_stalled");
  if (reasons.size === 0) return { status: 200, body: { status: "ready", databases: checks } };
  const ordered = NOT_READY_REASONS.filter((reason) => reasons.has(reason));
  return {
    status: 503,
    body: {
      status: "not_ready",
      reason: ordered[0],
      reasons: ordered,
      databases: checks,
      ...(stalled.length > 0 ? { stalled_workers: stalled } : {}),
    },
  };
}

/**
 * What /metrics shows of money in flight per environment: open rail exceptions, and what lines owe
 * of cleared ACH fundings the bank took back. A database that cannot answer shows nothing.
 */
export async function moneyInFlightGauges(
  databases: Readonly<Record<string, Database>>,
): Promise<{ environment: string; railExceptionsOpen: number; fundingShortfallCents: number }[]> {
  const gauges = [];
  for (const database of Object.values(databases)) {
    try {
      const { rows } = await database.readClient.execute(
        `SELECT (SELECT count(*) FROM rail_exceptions WHERE status = 'open') AS exceptions,
                (SELECT coalesce(-sum(balance_cents), 0) FROM ledger_accounts
                  WHERE code = 'funding_shortfall' AND balance_cents < 0) AS owed`,
      );
      gauges.push({
        environment: database.environment,
        railExceptionsOpen: Number(rows[0].exceptions),
        fundingShortfallCents: Number(rows[0].owed),
      });
    } catch {
      // Readiness reports an unreachable database; the other gauges still render.
    }
  }
  return gauges;
}
