/**
 * One tenant's dead endpoint against another tenant's deliveries (issue 16, item 1): company A's
 * endpoints (test and live) go to a black hole on 127.0.0.1 that accepts connections and never
 * answers, with a backlog of 40 disbursements' events each; company B's events then arrive every
 * `intervalMs`, alternating test and live, and each one's first attempt is timed at B's receiver.
 * The dispatcher runs as the service runs it (its worker loop every 500 ms, 10 s timeout, 8 slots
 * per endpoint). Live endpoints are https names resolving to a public address, carried by the
 * bench's fetch to the two listeners on this machine.
 */
import { openDatabase } from "../db/client.ts";
import type { Database } from "../db/client.ts";
import { recordEvent } from "../lib/webhooks/event_store.ts";
import { WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { systemClock } from "../lib/platform/clock.ts";
import { newWebhookSecret, SecretBox } from "../lib/platform/crypto.ts";
import type { Environment } from "../lib/platform/config.ts";

/** Events a disbursement writes on its way (created, offered, selected, funds sent). */
const EVENTS_PER_DISBURSEMENT = 4;
const DEAD_TENANT_DISBURSEMENTS = 40;
/** As main.ts runs the dispatcher. */
const DISPATCHER_INTERVAL_MS = 500;

export interface IsolationResult {
  readonly events: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** The dead tenant's events queued in each environment before the run. */
  readonly deadTenantQueued: number;
  /** Connections the black hole accepted: the dead tenant's attempts during the run. */
  readonly deadTenantAttempts: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function seed(database: Database, box: SecretBox, urls: { dead: string; alive: string }) {
  await database.writer.write(async (tx) => {
    for (const tenant of ["dead", "alive"] as const) {
      await tx.execute({
        sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, ?, ?, 0)",
        args: [`co_${tenant}`, tenant, tenant === "dead" ? "111111111" : "222222222"],
      });
      await tx.execute({
        sql:
          "INSERT INTO business_lines (id, company_id, code, created_at) VALUES (?, ?, 'auto', 0)",
        args: [`line_${tenant}`, `co_${tenant}`],
      });
      await tx.execute({
        sql:
          `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, events, secret_ciphertext, created_at)
              VALUES (?, ?, ?, 'v1', ?, '[]', ?, 0)`,
        args: [
          `we_${tenant}`,
          `co_${tenant}`,
          `line_${tenant}`,
          urls[tenant],
          await box.sealText(newWebhookSecret()),
        ],
      });
    }
  });
}

function emit(database: Database, tenant: "dead" | "alive", count: number): Promise<string[]> {
  return database.writer.write(async (tx) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(
        await recordEvent(tx, {
          companyId: `co_${tenant}`,
          lineId: `line_${tenant}`,
          key: "payee_updated",
          reason: "bench",
          data: { payee_id: `p${i}`, changed: ["email"] },
        }, Date.now()),
      );
    }
    return ids;
  });
}

export async function measureIsolation(
  options: { events: number; intervalMs: number },
): Promise<IsolationResult> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-bench-isolation-" });
  const hole = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const connection of hole) held.push(connection);
    } catch {
      // Closed at the end.
    }
  })();
  const firstArrival = new Map<string, number>();
  const receiver = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      await request.body?.cancel();
      const id = request.headers.get("x-event-id")!;
      if (!firstArrival.has(id)) firstArrival.set(id, performance.now());
      return new Response("ok");
    },
  );
  const holePort = (hole.addr as Deno.NetAddr).port;
  const local: Record<string, number> = {
    "dead.bench.test": holePort,
    "alive.bench.test": receiver.addr.port,
  };
  const open = (environment: Environment) =>
    openDatabase({
      environment,
      url: `file:${dir}/${environment}.db`,
      busyTimeoutMs: 5000,
      unitsPerGroupMax: 512,
      readCacheEntries: 0,
    });
  const databases = { test: await open("test"), live: await open("live") };
  const box = await SecretBox.fromBase64Key(btoa("b".repeat(32)));
  let dispatcher: WebhookDispatcher | null = null;
  try {
    await seed(databases.test, box, {
      dead: `http://127.0.0.1:${holePort}/hook`,
      alive: `http://127.0.0.1:${receiver.addr.port}/hook`,
    });
    await seed(databases.live, box, {
      dead: "https://dead.bench.test/hook",
      alive: "https://alive.bench.test/hook",
    });
    for (const database of Object.values(databases)) {
      await emit(database, "dead", DEAD_TENANT_DISBURSEMENTS * EVENTS_PER_DISBURSEMENT);
    }
    dispatcher = new WebhookDispatcher(databases, box, systemClock, {
      batchSize: 200,
      endpointsInParallel: 16,
      perEndpointConcurrency: 8,
      timeoutMs: 10_000,
      leaseMs: 30_000,
      resolve: () => Promise.resolve(["93.184.216.34"]),
      fetch: (input, init) => {
        const url = new URL(String(input));
        const port = local[url.hostname];
        return fetch(port ? `http://127.0.0.1:${port}${url.pathname}` : url, init);
      },
    });
    dispatcher.start(DISPATCHER_INTERVAL_MS);
    // The dead tenant's attempts hang before the other tenant's events begin.
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const emitted = new Map<string, number>();
    for (let i = 0; i < options.events; i++) {
      const database = i % 2 === 0 ? databases.test : databases.live;
      const [id] = await emit(database, "alive", 1);
      emitted.set(id, performance.now());
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
    const deadline = performance.now() + 30_000;
    while (firstArrival.size < emitted.size && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const latencies = [...emitted].map(([id, at]) =>
      (firstArrival.get(id) ?? Number.POSITIVE_INFINITY) - at
    ).sort((a, b) => a - b);
    return {
      events: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies.at(-1)!,
      deadTenantQueued: DEAD_TENANT_DISBURSEMENTS * EVENTS_PER_DISBURSEMENT,
      deadTenantAttempts: held.length,
    };
  } finally {
    // The black hole lets go, so the dead tenant's attempts end and stop() drains them.
    hole.close();
    await accepting;
    for (const connection of held) connection.close();
    await dispatcher?.stop();
    await receiver.shutdown();
    await databases.test.close();
    await databases.live.close();
    await Deno.remove(dir, { recursive: true });
  }
}
