/**
 * Kill the service (SIGKILL) during a burst of 1,000 events; after a restart on the same
 * DATA_DIR every event that was committed is delivered at least once.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { freePort } from "../bench/service.ts";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";

const mainPath = new URL("../main.ts", import.meta.url).pathname;

function startService(dataDir: string, port: number) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", mainPath, "--dev"],
    env: { DATA_DIR: dataDir, PORT: String(port), LOG_FORMAT: "off", RATE_LIMIT_RPS: "0" },
    stdout: "null",
    stderr: "null",
  }).spawn();
}

async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

Deno.test("SIGKILL during a burst of 1,000 events: after restart every committed event is delivered", async () => {
  const received = new Set<string>();
  const receiver = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      received.add(request.headers.get("x-event-id") ?? "");
      await request.body?.cancel();
      return new Response("ok");
    },
  );
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-crash-" });
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  let service = startService(dataDir, port);
  try {
    await waitFor(
      async () =>
        (await fetch(`${base}/readyz`).then((r) => r.body?.cancel().then(() => r.ok))) === true,
      60_000,
      "readiness",
    );
    const credentials = JSON.parse(
      await Deno.readTextFile(`${dataDir}/sandbox-credentials.json`),
    ) as SandboxCredentials;
    const headers = {
      Authorization: `Bearer ${credentials.companies[0].lines[0].key_test}`,
      "Content-Type": "application/json",
    };
    const registered = await fetch(`${base}/v1/webhooks`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        url: `http://127.0.0.1:${receiver.addr.port}/hook`,
        events: ["payee.updated"],
      }),
    });
    assert.equal(registered.status, 201);
    await registered.body?.cancel();

    // 1,000 payee updates, 20 at a time; the service is killed halfway through.
    let sent = 0;
    let killed = false;
    await Promise.all(Array.from({ length: 20 }, async (_, client) => {
      for (let i = 0; i < 50; i++) {
        if (sent === 500 && !killed) {
          killed = true;
          service.kill("SIGKILL");
        }
        sent++;
        try {
          const res = await fetch(`${base}/v1/payees`, {
            method: "POST",
            headers,
            body: JSON.stringify({ id: `payee-${client}`, email: `v${i}@example.test` }),
          });
          await res.body?.cancel();
        } catch {
          // the service is gone: requests in flight fail, as they would for a real client
        }
      }
    }));
    await service.status;
    assert.ok(killed);

    const database = createClient({ url: `file:${dataDir}/test.db` });
    const { rows } = await database.execute("SELECT id FROM events WHERE type = 'payee.updated'");
    database.close();
    const committed = rows.map((row) => String(row.id));
    assert.ok(committed.length >= 300, `${committed.length} events committed before the kill`);

    service = startService(dataDir, port);
    await waitFor(
      () => Promise.resolve(committed.every((id) => received.has(id))),
      60_000,
      "every event to be delivered",
    );
    assert.ok(committed.every((id) => received.has(id)));
  } finally {
    try {
      service.kill("SIGTERM");
    } catch {
      // already stopped
    }
    await service.status;
    await receiver.shutdown();
    await Deno.remove(dataDir, { recursive: true });
  }
});
