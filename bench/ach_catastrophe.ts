/**
 * A catastrophe day for ACH (issue 18): 10,000 payees who chose ACH, over 20 disbursements of 500
 * payees each, in the sandbox, all queued for one cutoff. Two figures, each against its target:
 *
 * - the time to build and check their file: the cutoff job's claim, build, strict check against
 *   the database and record, timed in this process on a copy of the service's data (at most 2 s);
 * - the API's p99 under a steady GET load while the cutoff runs in the service (the file built,
 *   transmitted to the sandbox bank and its 10,000 payouts moved to funds_sent), against the same
 *   load idle (at most 2x). The load is this process's own (`connections` requests in flight,
 *   every latency kept, none timed out), so a stall of the service's event loop counts in full
 *   and the load lasts exactly as long as the cutoff.
 *
 * Run alone with `deno run -A bench/ach_catastrophe.ts`; `deno task bench` runs it too.
 */
import { createClient } from "@libsql/client";
import { openDatabase } from "../db/client.ts";
import type { ExternalJob, JobHandlers } from "../db/scheduler.ts";
import { runDueJobs } from "../db/scheduler.ts";
import { SecretBox } from "../lib/platform/crypto.ts";
import { configDefaults } from "../lib/platform/config.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { startService } from "./service.ts";

const PAYEES = 10_000;
const PAYEES_PER_DISBURSEMENT = 500;
const PAYEE_AMOUNT_DOLLARS = 10;
/** The targets of the issue. */
const BUILD_MS_MAX = 2000;
const P99_RATIO_MAX = 2;
/** Clock advances while the payees' choices reach the queue; each runs every job that fell due. */
const QUEUE_ADVANCES_MAX = 10;

/** A steady load's latencies. */
export interface SteadyLoad {
  readonly requests: number;
  readonly failures: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/**
 * `connections` loops each sending one GET after another until `stop` settles; every answer's
 * latency is kept (a non-2xx counts as a failure).
 */
async function steadyLoad(
  request: { url: string; headers: Record<string, string>; connections: number },
  stop: Promise<unknown>,
): Promise<SteadyLoad> {
  let stopped = false;
  const ended = stop.finally(() => (stopped = true));
  const latencies: number[] = [];
  let failures = 0;
  const loop = async () => {
    while (!stopped) {
      const started = performance.now();
      const response = await fetch(request.url, { headers: request.headers });
      await response.body?.cancel();
      latencies.push(performance.now() - started);
      if (!response.ok) failures++;
    }
  };
  await Promise.all([...Array.from({ length: request.connections }, loop), ended]);
  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  return {
    requests: latencies.length,
    failures,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: latencies[latencies.length - 1],
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface AchCatastrophe {
  readonly entries: number;
  /** The cutoff job from its claim to its record: claim, build, check, record. */
  readonly buildMs: number;
  /** Of it, the build and check outside every write unit. */
  readonly buildCallMs: number;
  /** The clock advance that ran the cutoff in the service: build, transmit, 10,000 moves. */
  readonly cutoffRequestMs: number;
  readonly idle: SteadyLoad;
  readonly building: SteadyLoad;
}

async function json(response: Response): Promise<Record<string, unknown>> {
  const body = await response.json() as Record<string, unknown>;
  if (!response.ok) throw new Error(`${response.status}: ${JSON.stringify(body)}`);
  return body;
}

/** The pending cutoff job of the company with its due time, or null. */
async function pendingCutoff(dataDir: string, companyTin: string) {
  const client = createClient({ url: `file:${dataDir}/test.db` });
  try {
    const { rows } = await client.execute({
      sql:
        `SELECT j.due_at, j.company_id FROM scheduled_jobs j JOIN companies c ON c.id = j.company_id
            WHERE c.tin = ? AND j.kind = 'rail.cutoff' AND j.done_at IS NULL
            ORDER BY j.due_at DESC LIMIT 1`,
      args: [companyTin],
    });
    const queued = await client.execute(
      "SELECT count(*) AS n FROM rail_batch_entries WHERE status = 'queued'",
    );
    return {
      dueAt: rows[0] ? Number(rows[0].due_at) : null,
      companyId: rows[0] ? String(rows[0].company_id) : null,
      queued: Number(queued.rows[0].n),
    };
  } finally {
    client.close();
  }
}

/**
 * The cutoff of the copied data, run in this process with the service's own job handlers; the
 * cutoff job's phases are timed.
 */
async function timeCutoffInProcess(dataDir: string, companyId: string, dueAt: number) {
  const secrets = JSON.parse(await Deno.readTextFile(`${dataDir}/secrets.json`)) as {
    encryptionKey: string;
  };
  const secretBox = await SecretBox.fromBase64Key(secrets.encryptionKey);
  const database = await openDatabase({
    environment: "test",
    url: `file:${dataDir}/test.db`,
    busyTimeoutMs: 5000,
    unitsPerGroupMax: 512,
    readCacheEntries: 0,
  });
  try {
    const handlers = jobHandlersOf(
      "test",
      {
        offerTtlDays: configDefaults.OFFER_TTL_DAYS,
        baseUrl: "http://127.0.0.1:8000",
      },
      database,
      secretBox,
    );
    const cutoff = handlers["rail.cutoff"] as ExternalJob<unknown, unknown>;
    let claimedAt = 0;
    let builtMs = 0;
    let recordedAt = 0;
    const timedCutoff: ExternalJob<unknown, unknown> = {
      ...cutoff,
      prepare: async (tx, job) => {
        const started = performance.now();
        const claim = await cutoff.prepare(tx, job);
        // A cutoff job without a claim only schedules the next cutoff.
        if (claim !== null) claimedAt = started;
        return claim;
      },
      call: async (request, job) => {
        const started = performance.now();
        try {
          return await cutoff.call(request, job);
        } finally {
          builtMs = performance.now() - started;
        }
      },
      record: async (tx, job, answer) => {
        await cutoff.record(tx, job, answer);
        recordedAt = performance.now();
      },
    };
    const timed: JobHandlers = { ...handlers, "rail.cutoff": timedCutoff };
    await runDueJobs(database, companyId, dueAt, timed);
    const { rows } = await database.readClient.execute(
      "SELECT entry_count FROM ach_files ORDER BY created_at DESC LIMIT 1",
    );
    return {
      buildMs: recordedAt - claimedAt,
      buildCallMs: builtMs,
      fileEntries: rows[0] ? Number(rows[0].entry_count) : 0,
    };
  } finally {
    await database.close();
  }
}

export async function measureAchCatastrophe(
  options: { connections: number; seconds: number },
): Promise<AchCatastrophe> {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-bench-ach-" });
  const copyDir = await Deno.makeTempDir({ prefix: "disbursement-bench-ach-copy-" });
  try {
    let service = await startService({}, { dataDir });
    const acme = service.credentials.companies[0];
    const lineKey = acme.lines[0].key_test;
    const login = await json(
      await fetch(`${service.baseUrl}/api/authenticate`, {
        method: "POST",
        headers: { Authorization: `Basic ${btoa(`${acme.tin}:${acme.users[0].api_key_test}`)}` },
      }),
    );
    const api = {
      Authorization: `Bearer ${login.access_token}`,
      "Content-Type": "application/json",
    };
    for (let d = 0; d < PAYEES / PAYEES_PER_DISBURSEMENT; d++) {
      const payees = Array.from({ length: PAYEES_PER_DISBURSEMENT }, (_, i) => ({
        payee_type_id: 1,
        amount: PAYEE_AMOUNT_DOLLARS,
        payee_uuid: `P-${d}-${i}`,
        first_name: "Pat",
        last_name: `Doe ${i}`,
        // The sandbox chooses ACH for this payee at once (no portal visit).
        email: "success+ach@example.test",
        allowed_payment_method_ids: [1],
      }));
      await json(
        await fetch(`${service.baseUrl}/api/disbursements`, {
          method: "POST",
          headers: api,
          body: JSON.stringify({
            disbursement_uuid: `CAT-${d}`,
            large_disbursement: false,
            line: acme.lines[0].line,
            payees,
          }),
        }),
      );
    }
    const v1 = { Authorization: `Bearer ${lineKey}`, "Content-Type": "application/json" };
    const advance = async (seconds: number) => {
      const started = performance.now();
      await json(
        await fetch(`${service.baseUrl}/v1/sandbox/clock/advance`, {
          method: "POST",
          headers: v1,
          body: JSON.stringify({ seconds }),
        }),
      );
      return performance.now() - started;
    };
    // Offers, the sandbox's choice of ACH and the submissions: every credit queued for the cutoff.
    let queue = await pendingCutoff(dataDir, acme.tin);
    for (let i = 0; i < QUEUE_ADVANCES_MAX && queue.queued < PAYEES; i++) {
      await advance(1);
      queue = await pendingCutoff(dataDir, acme.tin);
    }
    if (queue.queued !== PAYEES || queue.dueAt === null || queue.companyId === null) {
      throw new Error(
        `expected ${PAYEES} queued ACH entries and a cutoff, found ${JSON.stringify(queue)}`,
      );
    }
    const clock = await json(await fetch(`${service.baseUrl}/v1/sandbox/clock`, { headers: v1 }));
    const untilCutoff = Math.ceil((queue.dueAt - Date.parse(String(clock.now))) / 1000) + 1;

    // The same data, copied while the service is stopped, for the in-process timing.
    await service.stop();
    for (const name of ["test.db", "live.db", "secrets.json"]) {
      await Deno.copyFile(`${dataDir}/${name}`, `${copyDir}/${name}`);
    }
    const timing = await timeCutoffInProcess(copyDir, queue.companyId, queue.dueAt);
    if (timing.fileEntries !== PAYEES) {
      throw new Error(`the cutoff built a file of ${timing.fileEntries} entries, not ${PAYEES}`);
    }

    service = await startService({}, { dataDir });
    try {
      const load = {
        url: `${service.baseUrl}/v1/ledgers/${acme.lines[0].line}/balance`,
        headers: { Authorization: `Bearer ${lineKey}` },
        connections: options.connections,
      };
      await steadyLoad(load, sleep(2000));
      const idle = await steadyLoad(load, sleep(options.seconds * 1000));
      // The load runs from a second before the cutoff until the cutoff's advance has answered.
      let cutoffRequestMs = 0;
      const cutoff = sleep(1000).then(async () => (cutoffRequestMs = await advance(untilCutoff)));
      const building = await steadyLoad(load, cutoff);
      return {
        entries: PAYEES,
        buildMs: timing.buildMs,
        buildCallMs: timing.buildCallMs,
        cutoffRequestMs,
        idle,
        building,
      };
    } finally {
      await service.stop();
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(copyDir, { recursive: true });
  }
}

/** The figures as printed, each with its target and whether it is met. */
export function describeAchCatastrophe(result: AchCatastrophe): string {
  const ratio = result.building.p99Ms / result.idle.p99Ms;
  const met = (ok: boolean) => (ok ? "met" : "NOT MET");
  return [
    `ACH catastrophe day: ${result.entries} payees who chose ACH, ${
      PAYEES / PAYEES_PER_DISBURSEMENT
    } disbursements of ${PAYEES_PER_DISBURSEMENT}, one cutoff`,
    `  build and check their file (claim, build, strict check against the database, record): ${
      result.buildMs.toFixed(0)
    } ms, of which build and check ${
      result.buildCallMs.toFixed(0)
    } ms (target <= ${BUILD_MS_MAX} ms: ${met(result.buildMs <= BUILD_MS_MAX)})`,
    `  the cutoff in the service (build, transmit to the sandbox bank, ${result.entries} payouts to funds_sent): ${
      result.cutoffRequestMs.toFixed(0)
    } ms`,
    `  GET balance p99 under a steady load: idle ${result.idle.p99Ms.toFixed(2)} ms (max ${
      result.idle.maxMs.toFixed(0)
    } ms, ${result.idle.requests} requests), during the cutoff ${
      result.building.p99Ms.toFixed(2)
    } ms (max ${
      result.building.maxMs.toFixed(0)
    } ms, ${result.building.requests} requests, ${result.building.failures} failed) = ${
      ratio.toFixed(2)
    }x (target <= ${P99_RATIO_MAX}x: ${met(ratio <= P99_RATIO_MAX)})`,
  ].join("\n");
}

if (import.meta.main) {
  const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 10);
  const connections = Number(Deno.env.get("BENCH_CONNECTIONS") ?? 32);
  console.log(describeAchCatastrophe(await measureAchCatastrophe({ connections, seconds })));
}
