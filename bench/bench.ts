/**
 * `deno task bench`: starts the service as `deno task dev` does (embedded SQLite, synchronous=FULL,
 * rate limit off) and measures each scenario with wrk, printing a table. Settings:
 * BENCH_SECONDS (default 10) and BENCH_CONNECTIONS (default 32).
 */
import { measureLedgerPosting } from "./ledger_posting.ts";
import { startService } from "./service.ts";
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

await ensureWrk();
const service = await startService();
const rows: Row[] = [];
try {
  const acme = service.credentials.companies[0];
  const lineKey = acme.lines[0].key_test;
  const scenarios: { scenario: string; url: string; headers: Record<string, string> }[] = [
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
  for (const scenario of scenarios) {
    // A short warm-up so JIT and caches do not count against the measured run.
    await runLoad({
      url: scenario.url,
      headers: scenario.headers,
      connections,
      durationSeconds: 2,
    });
    const result = await runLoad({
      url: scenario.url,
      headers: scenario.headers,
      connections,
      durationSeconds: seconds,
    });
    if (result.non2xx > 0) {
      console.error(`warning: ${scenario.scenario} answered ${result.non2xx} non-2xx responses`);
    }
    rows.push({ scenario: scenario.scenario, result });
  }
  console.log(`service resident memory after the runs: ${await service.residentMiB()} MiB`);
} finally {
  await service.stop();
}
printTable(rows);

const posting = await measureLedgerPosting({ transactions: 20_000, concurrency: 64 });
console.log(
  `\nledger posting through the group-commit writer (64 concurrent callers, synchronous=FULL): ` +
    `${posting.transactions} transactions in ${posting.seconds.toFixed(2)} s = ` +
    `${posting.perSecond.toFixed(0)} transactions/s in ${posting.groups} commits`,
);
