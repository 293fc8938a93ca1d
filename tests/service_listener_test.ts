/**
 * The service as `deno task start` runs it: a client that never finishes its headers is closed
 * after HEADER_TIMEOUT_MS (Deno.serve alone held such connections forever) while /healthz answers.
 */
import assert from "node:assert/strict";
import { withTempDir } from "./helpers.ts";
import { SERVICE_SECRETS, startServiceProcess } from "./service_process.ts";

Deno.test("the running service closes 200 connections whose headers never finish within HEADER_TIMEOUT_MS", async () => {
  await withTempDir(async (dataDir) => {
    const service = await startServiceProcess(dataDir, {
      env: { ...SERVICE_SECRETS, HEADER_TIMEOUT_MS: "1000", CONNECTIONS_PER_ADDRESS_MAX: "1000" },
    });
    const port = service.port;
    try {
      const slow: Deno.Conn[] = [];
      for (let i = 0; i < 200; i++) {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        await conn.write(new TextEncoder().encode("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
        slow.push(conn);
      }
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(health.status, 200);
      await health.body?.cancel();
      const closed = await Promise.all(slow.map(async (conn) => {
        const buffer = new Uint8Array(1024);
        const timer = AbortSignal.timeout(3000);
        const expired = new Promise<"open">((resolve) =>
          timer.addEventListener("abort", () => resolve("open"), { once: true })
        );
        for (;;) {
          const read = await Promise.race([conn.read(buffer).catch(() => null), expired]);
          if (read === "open") return false;
          if (read === null) return true;
        }
      }));
      for (const conn of slow) conn.close();
      assert.equal(closed.filter((c) => !c).length, 0, "connections still open after 3 s");
    } finally {
      await service.stop();
    }
  });
});
