/**
 * The API's read latency while 10,000 webhook deliveries drain, against the same read when idle
 * (issue 6: the drain may cost at most 1.5x the idle p99). The deliveries are queued in the
 * service's own database before it starts, to a receiver in its own process.
 */
import { createClient } from "@libsql/client";
import { openDatabase } from "../db/client.ts";
import { recordEvent } from "../lib/webhooks/event_store.ts";
import { newWebhookSecret, SecretBox } from "../lib/platform/crypto.ts";
import { freePort, startService } from "./service.ts";
import { type LoadResult, runLoad } from "./wrk.ts";

/** Half-second polls while waiting for the queue to empty: a minute at most. */
const DRAIN_WAIT_POLLS_MAX = 120;

export async function measureReadsDuringDrain(
  options: { deliveries: number; connections: number; seconds: number },
): Promise<{ draining: LoadResult; idle: LoadResult; drained: number }> {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-bench-drain-" });
  const receiverPort = freePort();
  const receiver = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("./webhook_receiver.ts", import.meta.url).pathname,
      String(receiverPort),
    ],
    stdout: "piped",
  }).spawn();
  const ready = receiver.stdout.getReader();
  await ready.read();
  ready.releaseLock();
  try {
    // First start seeds the sandbox; then the queue is filled while the service is down.
    const seeding = await startService({}, { dataDir });
    const lineKey = seeding.credentials.companies[0].lines[0].key_test;
    await seeding.stop();
    const secrets = JSON.parse(await Deno.readTextFile(`${dataDir}/secrets.json`)) as {
      encryptionKey: string;
    };
    const box = await SecretBox.fromBase64Key(secrets.encryptionKey);
    const database = await openDatabase({
      environment: "test",
      url: `file:${dataDir}/test.db`,
      busyTimeoutMs: 5000,
      unitsPerGroupMax: 512,
      readCacheEntries: 0,
    });
    const { rows } = await database.readClient.execute(
      "SELECT id, company_id FROM business_lines WHERE code = 'auto'",
    );
    const [lineId, companyId] = [String(rows[0].id), String(rows[0].company_id)];
    await database.writer.write(async (tx) =>
      tx.execute({
        sql:
          `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, events, secret_ciphertext, created_at)
              VALUES ('we_drain', ?, ?, 'v1', ?, '[]', ?, 0)`,
        args: [
          companyId,
          lineId,
          `http://127.0.0.1:${receiverPort}/hook`,
          await box.sealText(newWebhookSecret()),
        ],
      })
    );
    for (let i = 0; i < options.deliveries; i += 500) {
      await database.writer.write(async (tx) => {
        for (let j = i; j < Math.min(options.deliveries, i + 500); j++) {
          await recordEvent(tx, {
            companyId,
            lineId,
            key: "payee_updated",
            reason: "bench",
            data: { payee_id: `p${j}`, changed: ["email"] },
          }, Date.now());
        }
      });
    }
    await database.close();

    const service = await startService({}, { dataDir });
    const read = {
      url: `${service.baseUrl}/v1/ledgers/auto/balance`,
      headers: { Authorization: `Bearer ${lineKey}` },
    };
    try {
      // The same 2 s warm-up as every other scenario, so JIT and caches do not count against the
      // draining run (under traffic the deliveries are paced: a few hundred go meanwhile).
      await runLoad({ ...read, connections: options.connections, durationSeconds: 2 });
      const draining = await runLoad({
        ...read,
        connections: options.connections,
        durationSeconds: options.seconds,
      });
      // Let the rest drain, then measure the same read on an idle service.
      const probe = createClient({ url: `file:${dataDir}/test.db` });
      let drained = 0;
      for (let i = 0; i < DRAIN_WAIT_POLLS_MAX && drained < options.deliveries; i++) {
        const { rows } = await probe.execute(
          "SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'succeeded'",
        );
        drained = Number(rows[0].n);
        if (drained < options.deliveries) await new Promise((resolve) => setTimeout(resolve, 500));
      }
      probe.close();
      const idle = await runLoad({
        ...read,
        connections: options.connections,
        durationSeconds: options.seconds,
      });
      return { draining, idle, drained };
    } finally {
      await service.stop();
    }
  } finally {
    receiver.kill("SIGTERM");
    await receiver.status;
    await receiver.stdout.cancel();
    await Deno.remove(dataDir, { recursive: true });
  }
}
