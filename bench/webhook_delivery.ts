/**
 * Signed webhook deliveries per second: `count` events queued to one endpoint on a local receiver
 * (its own process), drained by the dispatcher as the service runs it.
 */
import { openDatabase } from "../db/client.ts";
import { recordEvent } from "../lib/webhooks/event_store.ts";
import { WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { systemClock } from "../lib/platform/clock.ts";
import { newWebhookSecret, SecretBox } from "../lib/platform/crypto.ts";
import { freePort } from "./service.ts";

export async function measureDeliveries(
  count: number,
): Promise<{ deliveries: number; seconds: number; perSecond: number }> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-bench-webhooks-" });
  const port = freePort();
  const receiver = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./webhook_receiver.ts", import.meta.url).pathname, String(port)],
    stdout: "piped",
  }).spawn();
  const ready = receiver.stdout.getReader();
  await ready.read();
  ready.releaseLock();
  const database = await openDatabase({
    environment: "test",
    url: `file:${dir}/test.db`,
    busyTimeoutMs: 5000,
    unitsPerGroupMax: 512,
    readCacheEntries: 0,
  });
  // Its own empty live database: the dispatcher claims from both environments in every round.
  const live = await openDatabase({
    environment: "live",
    url: `file:${dir}/live.db`,
    busyTimeoutMs: 5000,
    unitsPerGroupMax: 512,
    readCacheEntries: 0,
  });
  const box = await SecretBox.fromBase64Key(btoa("b".repeat(32)));
  try {
    await database.writer.write(async (tx) => {
      await tx.execute(
        "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_b', 'Bench', '123456789', 0)",
      );
      await tx.execute(
        "INSERT INTO business_lines (id, company_id, code, created_at) VALUES ('line_b', 'co_b', 'auto', 0)",
      );
      await tx.execute({
        sql:
          `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, events, secret_ciphertext, created_at)
              VALUES ('we_b', 'co_b', 'line_b', 'v1', ?, '[]', ?, 0)`,
        args: [`http://127.0.0.1:${port}/hook`, await box.sealText(newWebhookSecret())],
      });
    });
    const now = Date.now();
    for (let i = 0; i < count; i += 500) {
      await database.writer.write(async (tx) => {
        for (let j = i; j < Math.min(count, i + 500); j++) {
          await recordEvent(tx, {
            companyId: "co_b",
            lineId: "line_b",
            key: "payee_updated",
            reason: "bench",
            data: { payee_id: `p${j}`, changed: ["email"] },
          }, now);
        }
      });
    }
    const dispatcher = new WebhookDispatcher({ test: database, live }, box, systemClock, {
      batchSize: 200,
      endpointsInParallel: 16,
      perEndpointConcurrency: 8,
      timeoutMs: 10_000,
      leaseMs: 30_000,
    });
    const started = performance.now();
    let delivered = 0;
    while (delivered < count) {
      const made = await dispatcher.sweep();
      if (made === 0) break;
      delivered += made;
    }
    const seconds = (performance.now() - started) / 1000;
    return { deliveries: delivered, seconds, perSecond: delivered / seconds };
  } finally {
    await database.close();
    await live.close();
    receiver.kill("SIGTERM");
    await receiver.status;
    await receiver.stdout.cancel();
    await Deno.remove(dir, { recursive: true });
  }
}
