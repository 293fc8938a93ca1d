/**
 * Scale-out on a libSQL primary (issue 22): service nodes (`main.ts` processes) on the Hrana
 * contract server (tests/hrana_server.ts) with a round trip of `delayMs` added to every request
 * the primary receives. Creates (`POST /v1/disbursements`, an Idempotency-Key each) and reads
 * (`GET /v1/disbursements/{id}`) through one node, then spread over two, by a closed loop of
 * `connections` callers: throughput and p99.
 *
 * And the arithmetic: a create's requests to the primary and the time the primary's write lock
 * is held for it, measured in process with the same delay (one create at a time, then 16 at
 * once, which the writer groups). The write lock is one per primary, so whatever the number of
 * nodes, creates per second cannot exceed 1000 / (lock ms per create).
 */
import {
  migratePrimary,
  SHARED_SECRETS,
  spawnNode,
  startPrimary,
  waitReady,
} from "../tests/node_helpers.ts";
import type { ServiceNode } from "../tests/node_helpers.ts";
import { fundAcmeAuto } from "../tests/http_fixture.ts";
import { openRemoteHttpFixture } from "../tests/remote_fixture.ts";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";

export interface ScaleOutRun {
  readonly scenario: "create" | "get";
  readonly nodes: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: number;
  /** Answers other than 2xx by status ("error": the request failed outright). */
  readonly failures: Readonly<Record<string, number>>;
  /** Requests the primary received per call, the nodes' background work included. */
  readonly primaryRequestsPerCall: number;
  /** Write-lock milliseconds per call, the nodes' background work (offer jobs) included. */
  readonly lockMsPerCall: number;
}

export interface CreateCost {
  /** HTTP requests the primary received per create. */
  readonly requests: number;
  /** Milliseconds the primary spent inside write transactions per create. */
  readonly lockMs: number;
}

export interface ScaleOutResult {
  readonly delayMs: number;
  readonly connections: number;
  readonly seconds: number;
  /** One keyed create at a time. */
  readonly alone: CreateCost;
  /** Keyed creates 16 at once: the writer groups them. */
  readonly grouped: CreateCost;
  readonly runs: readonly ScaleOutRun[];
  /** Requests per second the idle nodes make to the primary (schedulers, dispatchers). */
  readonly idleRequestsPerSecond: number;
  /** Write-lock milliseconds per second the idle nodes hold. */
  readonly idleLockMsPerSecond: number;
}

const GROUPED_CREATES = 16;
const ALONE_CREATES = 10;

/** A create's cost on the contract server, in process (no scheduler or dispatcher running). */
async function measureCreateCost(
  delayMs: number,
): Promise<{ alone: CreateCost; grouped: CreateCost }> {
  const f = await openRemoteHttpFixture({ RATE_LIMIT_RPS: "0" });
  try {
    await fundAcmeAuto(f, 100_000_000);
    const headers = {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    };
    const payee = await f.app.request("/v1/payees", {
      method: "POST",
      headers,
      body: JSON.stringify({ id: "noaction", email: "noaction@example.test" }),
    });
    await payee.body?.cancel();
    const body = JSON.stringify({
      amount: 1,
      claim_id: "BENCH",
      payee: { id: "noaction" },
      modalities: ["ach"],
    });
    const create = async () => {
      const answer = await f.app.request("/v1/disbursements", {
        method: "POST",
        headers: { ...headers, "Idempotency-Key": crypto.randomUUID() },
        body,
      });
      if (answer.status !== 201) throw new Error(`a create answered ${answer.status}`);
      await answer.body?.cancel();
    };
    const primary = f.primaries.test;
    primary.setDelay(delayMs);
    await create(); // warm-up: the writer's stream, the SQL texts
    primary.resetCount();
    for (let i = 0; i < ALONE_CREATES; i++) await create();
    const alone = {
      requests: primary.requestCount() / ALONE_CREATES,
      lockMs: primary.transactionMs() / ALONE_CREATES,
    };
    primary.resetCount();
    await Promise.all(Array.from({ length: GROUPED_CREATES }, create));
    const grouped = {
      requests: primary.requestCount() / GROUPED_CREATES,
      lockMs: primary.transactionMs() / GROUPED_CREATES,
    };
    return { alone, grouped };
  } finally {
    await f.close();
  }
}

/** A closed loop of `connections` callers over `bases` (round robin by caller) for `seconds`. */
async function load(
  bases: readonly string[],
  request: (base: string) => Request,
  options: { connections: number; seconds: number },
): Promise<Omit<ScaleOutRun, "scenario" | "nodes" | "primaryRequestsPerCall" | "lockMsPerCall">> {
  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  const failed = (status: string) => failures[status] = (failures[status] ?? 0) + 1;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  await Promise.all(Array.from({ length: options.connections }, async (_, caller) => {
    const base = bases[caller % bases.length];
    while (performance.now() < deadline) {
      const sent = performance.now();
      try {
        const answer = await fetch(request(base));
        await answer.body?.cancel();
        if (!answer.ok) failed(String(answer.status));
      } catch {
        failed("error");
      }
      latencies.push(performance.now() - sent);
    }
  }));
  const elapsedSeconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  return {
    requestsPerSecond: latencies.length / elapsedSeconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    requests: latencies.length,
    failures,
  };
}

export async function measureScaleOut(
  options: { connections: number; seconds: number; delayMs?: number },
): Promise<ScaleOutResult> {
  const delayMs = options.delayMs ?? 20;
  const { alone, grouped } = await measureCreateCost(delayMs);

  const primary = await startPrimary({ batonTtlMs: 10_000 });
  const nodes: ServiceNode[] = [];
  try {
    await migratePrimary(primary);
    // The first node seeds the sandbox; the second starts on the seeded primary.
    nodes.push(await spawnNode(primary, { ...SHARED_SECRETS }));
    await waitReady(nodes[0]);
    nodes.push(await spawnNode(primary, { ...SHARED_SECRETS }));
    await waitReady(nodes[1]);
    const credentials = JSON.parse(
      await Deno.readTextFile(`${nodes[0].dataDir}/sandbox-credentials.json`),
    ) as SandboxCredentials;
    const lineKey = credentials.companies[0].lines[0].key_test;
    const auth = { Authorization: `Bearer ${lineKey}`, "Content-Type": "application/json" };
    const base = nodes[0].base;
    const payee = await fetch(`${base}/v1/payees`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ id: "noaction", email: "noaction@example.test" }),
    });
    await payee.body?.cancel();
    const createBody = JSON.stringify({
      amount: 1,
      claim_id: "BENCH",
      payee: { id: "noaction" },
      modalities: ["ach"],
    });
    const one = await (await fetch(`${base}/v1/disbursements`, {
      method: "POST",
      headers: auth,
      body: createBody,
    })).json() as { id: string };

    for (const server of Object.values(primary.servers)) server.setDelay(delayMs);
    primary.servers.test.resetCount();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const idleRequestsPerSecond = primary.servers.test.requestCount() / 2;
    const idleLockMsPerSecond = primary.servers.test.transactionMs() / 2;

    const create = (at: string) =>
      new Request(`${at}/v1/disbursements`, {
        method: "POST",
        headers: { ...auth, "Idempotency-Key": crypto.randomUUID() },
        body: createBody,
      });
    const get = (at: string) =>
      new Request(`${at}/v1/disbursements/${one.id}`, {
        headers: { Authorization: auth.Authorization },
      });
    const runs: ScaleOutRun[] = [];
    for (const [scenario, request] of [["create", create], ["get", get]] as const) {
      for (const count of [1, 2]) {
        const bases = nodes.slice(0, count).map((node) => node.base);
        // A short warm-up, so JIT and connections do not count against the measured run.
        await load(bases, request, { connections: options.connections, seconds: 1 });
        const primaryTest = primary.servers.test;
        primaryTest.resetCount();
        const result = await load(bases, request, options);
        runs.push({
          scenario,
          nodes: count,
          ...result,
          primaryRequestsPerCall: primaryTest.requestCount() / result.requests,
          lockMsPerCall: primaryTest.transactionMs() / result.requests,
        });
      }
    }
    return {
      delayMs,
      connections: options.connections,
      seconds: options.seconds,
      alone,
      grouped,
      runs,
      idleRequestsPerSecond,
      idleLockMsPerSecond,
    };
  } finally {
    for (const node of nodes) await node.stop();
    await primary.close();
  }
}

export function describeScaleOut(result: ScaleOutResult): string {
  const { delayMs, alone, grouped } = result;
  const lines = [
    `Scale-out on a libSQL primary (the Hrana contract server, ${delayMs} ms added per request; ` +
    `${result.connections} callers, ${result.seconds} s per run; the nodes' idle background: ` +
    `${result.idleRequestsPerSecond.toFixed(1)} requests/s holding the write lock ` +
    `${result.idleLockMsPerSecond.toFixed(0)} ms per second)`,
    "",
    "| scenario | nodes | requests/s | p50 ms | p99 ms | requests | failures | primary requests per call | write lock ms per call |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...result.runs.map((run) =>
      `| ${
        run.scenario === "create" ? "POST /v1/disbursements (keyed)" : "GET /v1/disbursements/{id}"
      } | ${run.nodes} | ${run.requestsPerSecond.toFixed(1)} | ${run.p50Ms.toFixed(0)} | ${
        run.p99Ms.toFixed(0)
      } | ${run.requests} | ${
        Object.entries(run.failures).map(([status, n]) => `${n} × ${status}`).join(", ") || 0
      } | ${run.primaryRequestsPerCall.toFixed(1)} | ${run.lockMsPerCall.toFixed(0)} |`
    ),
    "",
    `A keyed create, one at a time: ${alone.requests.toFixed(1)} requests to the primary ` +
    `(a latency floor of ${(alone.requests * delayMs).toFixed(0)} ms), the write lock held ` +
    `${alone.lockMs.toFixed(0)} ms: at most ${(1000 / alone.lockMs).toFixed(1)} creates/s.`,
    `${GROUPED_CREATES} at once (grouped by the writer): ${grouped.requests.toFixed(1)} requests ` +
    `and ${grouped.lockMs.toFixed(0)} ms of write lock per create: at most ` +
    `${(1000 / grouped.lockMs).toFixed(1)} creates/s for the whole primary, however many nodes.`,
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const connections = Number(Deno.env.get("BENCH_CONNECTIONS") ?? 32);
  const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 10);
  console.log(describeScaleOut(await measureScaleOut({ connections, seconds })));
}
