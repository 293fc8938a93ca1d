/**
 * What one /v1 create costs without the network: the same route, auth, idempotency, ledger hold
 * and write unit as `POST /v1/disbursements`, called in process (`app.request`, 32 callers, so
 * creates queued for one group are written together as the service writes them) on a durable
 * file, with no scheduler running; then the offer jobs those creates scheduled, run as the
 * service's sweep runs them (JOBS_PER_BATCH_MAX per batch, offers due together made together). The sum bounds what the one writer thread can
 * answer per second before any HTTP parsing or socket work is added. Last, the cost of one bare
 * row (an event) inserted through the same writer, the floor under every row a create writes.
 * CPU is given for the whole process and for the service's thread alone (Linux): the WAL's
 * checkpoints run on a thread of their own (db/checkpointer.ts), which the process's figure counts.
 */
import { cpus } from "node:os";
import process from "node:process";
import { JOBS_PER_BATCH_MAX, runDueJobs } from "../db/scheduler.ts";
import { newId } from "../lib/platform/keys.ts";
import { fundAcmeAuto, openHttpFixture } from "../tests/http_fixture.ts";

export interface CreateCostResult {
  readonly creates: number;
  readonly createsPerSecond: number;
  readonly cpuMicrosPerCreate: number;
  /** The service's thread's own CPU per create (null off Linux). */
  readonly threadCpuMicrosPerCreate: number | null;
  readonly offersPerSecond: number;
  readonly cpuMicrosPerOffer: number;
  readonly threadCpuMicrosPerOffer: number | null;
  /** Creates per second one thread could answer if each also paid for its offer, network aside. */
  readonly createsWithOfferPerSecond: number;
  /** One `events` row inserted through the writer, 20,000 in one unit: the floor of a row. */
  readonly microsPerEventRow: number;
}

const EVENT_ROWS = 20_000;

const CALLERS = 32;

/** CPU time of this process in microseconds (user + system, every thread). */
const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/**
 * CPU time of the service's thread (the main thread, whose id is the process's) in microseconds,
 * from Linux's per-thread counters (in clock ticks of 10 ms: a run of a second or more reads them
 * within 1 %); null where there are none.
 */
const threadCpuMicros = (): number | null => {
  try {
    const fields = Deno.readTextFileSync(`/proc/self/task/${Deno.pid}/stat`).split(") ")[1]
      .split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
};

const perItem = (before: number | null, after: number | null, items: number) =>
  before === null || after === null ? null : (after - before) / items;

export async function measureCreateCost(creates: number): Promise<CreateCostResult> {
  const f = await openHttpFixture({ RATE_LIMIT_RPS: "0" });
  try {
    const database = f.deps.databases.test;
    await fundAcmeAuto(f, creates * 100);
    const headers = {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    };
    const payee = await f.app.request("/v1/payees", {
      method: "POST",
      headers,
      body: JSON.stringify({ id: "noaction", email: "noaction@example.test" }),
    });
    if (payee.status !== 201) throw new Error(`payee upsert answered ${payee.status}`);
    const body = JSON.stringify({
      amount: 1,
      claim_id: "BENCH",
      payee: { id: "noaction" },
      modalities: ["ach"],
    });
    let next = 0;
    const createCpu = cpuMicros();
    const createThreadCpu = threadCpuMicros();
    const createStarted = performance.now();
    await Promise.all(Array.from({ length: CALLERS }, async () => {
      while (next < creates) {
        const response = await f.app.request("/v1/disbursements", {
          method: "POST",
          headers: { ...headers, "Idempotency-Key": `bench-${next++}` },
          body,
        });
        if (response.status !== 201) throw new Error(`create answered ${response.status}`);
        await response.body?.cancel();
      }
    }));
    const createSeconds = (performance.now() - createStarted) / 1000;
    const createCpuMicros = cpuMicros() - createCpu;
    const threadCpuMicrosPerCreate = perItem(createThreadCpu, threadCpuMicros(), creates);

    const offerCpu = cpuMicros();
    const offerThreadCpu = threadCpuMicros();
    const offerStarted = performance.now();
    const offers = await runDueJobs(
      database,
      f.cast.acme.id,
      f.clock.now(),
      f.deps.jobHandlers.test,
      { perBatch: JOBS_PER_BATCH_MAX },
    );
    const offerSeconds = (performance.now() - offerStarted) / 1000;
    const offerCpuMicros = cpuMicros() - offerCpu;
    const threadCpuMicrosPerOffer = perItem(offerThreadCpu, threadCpuMicros(), offers);
    if (offers !== creates) throw new Error(`${offers} offers for ${creates} creates`);

    const rowsStarted = performance.now();
    await database.writer.write(async (tx) => {
      const data = JSON.stringify({ payout_id: "payout_x", status: "created", amount_cents: 100 });
      for (let i = 0; i < EVENT_ROWS; i++) {
        await tx.execute({
          sql: `INSERT INTO events (id, company_id, line_id, type, event_type_id, data, created_at)
                VALUES (?, ?, ?, 'disbursement.created', 1, ?, ?)`,
          args: [newId("evt"), f.cast.acme.id, f.cast.acme.autoLineId, data, f.clock.now()],
        });
      }
    });
    const microsPerEventRow = (performance.now() - rowsStarted) * 1000 / EVENT_ROWS;
    return {
      creates,
      createsPerSecond: creates / createSeconds,
      cpuMicrosPerCreate: createCpuMicros / creates,
      threadCpuMicrosPerCreate,
      offersPerSecond: offers / offerSeconds,
      cpuMicrosPerOffer: offerCpuMicros / offers,
      threadCpuMicrosPerOffer,
      createsWithOfferPerSecond: 1 / (createSeconds / creates + offerSeconds / offers),
      microsPerEventRow,
    };
  } finally {
    await f.close();
  }
}

if (import.meta.main) {
  const result = await measureCreateCost(Number(Deno.args[0] ?? 20_000));
  console.log(JSON.stringify({ ...result, cores: cpus().length }));
}
