/**
 * The service as `deno task start` runs it: a client that never finishes its headers is closed
 * after HEADER_TIMEOUT_MS (Deno.serve alone held such connections forever) while /healthz answers.
 */
import assert from "node:assert/strict";
import { freePort } from "../bench/service.ts";
import { withTempDir } from "./helpers.ts";

const root = new URL("..", import.meta.url).pathname;

Deno.test("the running service closes 200 connections whose headers never finish within HEADER_TIMEOUT_MS", async () => {
  await withTempDir(async (dataDir) => {
    const port = freePort();
    const service = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-cron", `${root}main.ts`],
      env: {
        DATA_DIR: dataDir,
        PORT: String(port),
        JWT_SECRET: "j".repeat(40),
        ENCRYPTION_KEY: btoa("e".repeat(32)),
        LIVE_NOTIFICATIONS: "off",
        LOG_FORMAT: "off",
        HEADER_TIMEOUT_MS: "1000",
        CONNECTIONS_PER_ADDRESS_MAX: "1000",
      },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(service.stderr).text();
    try {
      let ready = false;
      for (let i = 0; i < 300 && !ready; i++) {
        ready = await fetch(`http://127.0.0.1:${port}/readyz`)
          .then((r) => r.body?.cancel().then(() => r.ok) ?? r.ok)
          .catch(() => false);
        if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(ready, "the service became ready");
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
      service.kill("SIGTERM");
      await service.status;
      await stderr;
    }
  });
});
