/**
 * `deno task bench`: starts the service as `deno task dev` does (embedded SQLite, synchronous=FULL,
 * rate limit off) and measures each scenario with wrk, printing a table. Settings:
 * BENCH_SECONDS (default 10) and BENCH_CONNECTIONS (default 32). It starts with the cold start
 * (bench/cold_start.ts): spawn to the first /readyz 200, the service against a bare Deno.serve;
 * then the console at 100,000 payouts (bench/console.ts); it ends with the ACH catastrophe day
 * (bench/ach_catastrophe.ts).
 */
import { createClient } from "@libsql/client";
import { describeAchCatastrophe, measureAchCatastrophe } from "./ach_catastrophe.ts";
import { measureReadsDuringDrain } from "./drain.ts";
import { describeColdStart, measureColdStart } from "./cold_start.ts";
import { describeConsole, measureConsole } from "./console.ts";
import { describeScaleOut, measureScaleOut } from "./scale_out.ts";
import { measureCreateCost } from "./create_cost.ts";
import { measureLedgerPosting } from "./ledger_posting.ts";
import { measureDeliveries } from "./webhook_delivery.ts";
import { measureIsolation } from "./webhook_isolation.ts";
import { measureAtScale } from "./scale.ts";
import { freePort, startService } from "./service.ts";
import { ensureWrk, type LoadResult, runLoad } from "./wrk.ts";

const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 10);
const connections = Number(Deno.env.get("BENCH_CONNECTIONS") ?? 32);

interface Row {
  readonly scenario: string;
  readonly result: LoadResult;
}

function printTable(rows: Row[]): void {
  console.log(
    `\n${connections} connections, ${seconds} s each, 2 wrk threads, on ${navigator.hardwareConcurrency} cores\n`,
  );
  console.log("| scenario | requests/s | p50 ms | p99 ms | requests | non-2xx | socket errors |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const { scenario, result } of rows) {
    console.log(
      `| ${scenario} | ${result.requestsPerSecond.toFixed(0)} | ${result.p50Ms.toFixed(2)} | ${
        result.p99Ms.toFixed(2)
      } | ${result.requests} | ${result.non2xx} | ${result.socketErrors} |`,
    );
  }
}

/** A wrk script that POSTs `body` with a fresh Idempotency-Key per request (thread-unique). */
async function writeCreateScript(lineKey: string, body: string): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(
    path,
    `local counter = 0
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function request()
  counter = counter + 1
  local headers = {}
  headers["Authorization"] = "Bearer ${lineKey}"
  headers["Content-Type"] = "application/json"
  headers["Idempotency-Key"] = "bench-" .. tid .. "-" .. counter .. "-" .. math.random(1, 1000000000)
  return wrk.format("POST", nil, headers, ${JSON.stringify(body)})
end
`,
  );
  return path;
}

/** The bare baseline in its own process, measured with the same load. */
async function measureBaseline(): Promise<LoadResult> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-baseline-" });
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./baseline.ts", import.meta.url).pathname, String(port), dir],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  await reader.read();
  reader.releaseLock();
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(
    script,
    `function request() return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, '{"amount":1}') end\n`,
  );
  const url = `http://127.0.0.1:${port}/rows`;
  try {
    await runLoad({ url, script, connections, durationSeconds: 2 });
    return await runLoad({ url, script, connections, durationSeconds: seconds });
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel();
    await Deno.remove(script);
    await Deno.remove(dir, { recursive: true });
  }
}

// First, while nothing else of the bench runs: spawn to /readyz 200, the service against bare Deno.serve.
console.log(describeColdStart(await measureColdStart()));

await ensureWrk();
const service = await startService();
const rows: Row[] = [];
try {
  const acme = service.credentials.companies[0];
  const lineKey = acme.lines[0].key_test;
  const scenarios: {
    scenario: string;
    url: string;
    headers: Record<string, string>;
    script?: string;
  }[] = [
    {
      scenario: `GET /v1/ledgers/${acme.lines[0].line}/balance (line key auth + balance read)`,
      url: `${service.baseUrl}/v1/ledgers/${acme.lines[0].line}/balance`,
      headers: { Authorization: `Bearer ${lineKey}` },
    },
    {
      scenario: "GET /healthz (no auth, no database)",
      url: `${service.baseUrl}/healthz`,
      headers: {},
    },
  ];
  // A payee for the writes, and one disbursement for the reads.
  const auth = { Authorization: `Bearer ${lineKey}`, "Content-Type": "application/json" };
  await (await fetch(`${service.baseUrl}/v1/payees`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ id: "noaction", email: "noaction@example.test" }),
  })).body?.cancel();
  const createBody = JSON.stringify({
    amount: 1,
    claim_id: "BENCH",
    payee: { id: "noaction" },
    modalities: ["ach"],
  });
  const one = await (await fetch(`${service.baseUrl}/v1/disbursements`, {
    method: "POST",
    headers: auth,
    body: createBody,
  }))
    .json() as { id: string };
  scenarios.push({
    scenario: `GET /v1/disbursements/{id}`,
    url: `${service.baseUrl}/v1/disbursements/${one.id}`,
    headers: { Authorization: `Bearer ${lineKey}` },
  });
  const createScript = await writeCreateScript(lineKey, createBody);
  scenarios.push({
    scenario: "POST /v1/disbursements (auth, idempotency key, hold, outbox)",
    url: `${service.baseUrl}/v1/disbursements`,
    headers: {},
    script: createScript,
  });
  for (const scenario of scenarios) {
    // A short warm-up so JIT and caches do not count against the measured run.
    await runLoad({ ...scenario, connections, durationSeconds: 2 });
    const result = await runLoad({ ...scenario, connections, durationSeconds: seconds });
    if (result.non2xx > 0) {
      console.error(`warning: ${scenario.scenario} answered ${result.non2xx} non-2xx responses`);
    }
    rows.push({ scenario: scenario.scenario, result });
  }
  console.log(`service resident memory after the runs: ${await service.residentMiB()} MiB`);
  // A create is done for its payee once offered: how far the offers trail the creates.
  const probe = createClient({ url: `file:${service.dataDir}/test.db` });
  const { rows: offers } = await probe.execute(
    `SELECT count(*) AS payouts, sum(status = 'created') AS waiting FROM payouts`,
  );
  probe.close();
  console.log(
    `payouts created: ${offers[0].payouts}; not yet offered to their payee when the runs ended: ${
      offers[0].waiting
    }`,
  );
} finally {
  await service.stop();
}
rows.push({
  scenario: "baseline: Hono + one INSERT per FULL write transaction",
  result: await measureBaseline(),
});
printTable(rows);

const deliveries = await measureDeliveries(10_000);
console.log(
  `\nsigned webhook deliveries to a local receiver (one endpoint, 8 in flight, as the service runs it): ` +
    `${deliveries.deliveries} in ${deliveries.seconds.toFixed(2)} s = ${
      deliveries.perSecond.toFixed(0)
    } deliveries/s`,
);

const isolation = await measureIsolation({ events: 100, intervalMs: 100 });
console.log(
  `another tenant's first webhook attempt while one tenant's endpoints (test and live) are a black hole ` +
    `with ${isolation.deadTenantQueued} events queued each (10 s timeout, 8 slots per endpoint): p50 ${
      isolation.p50Ms.toFixed(0)
    } ms, p99 ${isolation.p99Ms.toFixed(0)} ms, max ${
      isolation.maxMs.toFixed(0)
    } ms over ${isolation.events} events ` +
    `(target p99 <= 2,000 ms); the dead tenant's attempts meanwhile: ${isolation.deadTenantAttempts}`,
);

const drain = await measureReadsDuringDrain({ deliveries: 10_000, connections, seconds: 5 });
console.log(
  `GET /v1/ledgers/auto/balance while 10,000 deliveries drain: p99 ${
    drain.draining.p99Ms.toFixed(2)
  } ms ` +
    `(${drain.draining.requestsPerSecond.toFixed(0)} req/s); idle afterwards: p99 ${
      drain.idle.p99Ms.toFixed(2)
    } ms ` +
    `(${drain.idle.requestsPerSecond.toFixed(0)} req/s); ratio ${
      (drain.draining.p99Ms / drain.idle.p99Ms).toFixed(2)
    }; ` +
    `${drain.drained} delivered`,
);

const posting = await measureLedgerPosting({ transactions: 20_000, concurrency: 64 });
console.log(
  `\nledger posting through the group-commit writer (64 concurrent callers, synchronous=FULL): ` +
    `${posting.transactions} transactions in ${posting.seconds.toFixed(2)} s = ` +
    `${posting.perSecond.toFixed(0)} transactions/s in ${posting.groups} commits`,
);

const cost = await measureCreateCost(20_000);
console.log(
  `\n/v1 create without the network (app.request, 32 callers, no scheduler): ` +
    `${cost.createsPerSecond.toFixed(0)} creates/s, ${
      cost.cpuMicrosPerCreate.toFixed(0)
    } µs CPU each; ` +
    `their offers (sweep batches of 32): ${cost.offersPerSecond.toFixed(0)} offers/s, ${
      cost.cpuMicrosPerOffer.toFixed(0)
    } µs CPU each; ` +
    `a create with its offer: at most ${
      cost.createsWithOfferPerSecond.toFixed(0)
    }/s on the one writer thread; one bare event row through the writer: ${
      cost.microsPerEventRow.toFixed(1)
    } µs`,
);

const scale = await measureAtScale({ connections, seconds: 5 });
const rate = (result: LoadResult) =>
  `${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(2)} ms`;
console.log(
  `\nat scale: balance read with 10,000 ledger entries ${rate(scale.small.balance)}; with ` +
    `1,000,000 entries and 1,000,000 disbursements ${rate(scale.large.balance)} (ratio ${
      (scale.large.balance.requestsPerSecond / scale.small.balance.requestsPerSecond).toFixed(2)
    }); GET /v1/disbursements/{id} among them: one id again and again ${
      rate(scale.large.byId)
    }, a random id each time (read cache missed) ${rate(scale.large.byRandomId)}; ` +
    `service resident memory ${scale.large.residentMiB} MiB`,
);

console.log(`\n${describeConsole(await measureConsole())}`);

console.log(`\n${describeScaleOut(await measureScaleOut({ connections, seconds }))}`);

console.log(`\n${describeAchCatastrophe(await measureAchCatastrophe({ connections, seconds }))}`);
