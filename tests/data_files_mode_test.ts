/**
 * A manual start (no systemd unit and its UMask=0077) still keeps the data directory private:
 * the service sets its own umask, so the databases it creates are 0600, not 0644.
 */
import assert from "node:assert/strict";
import { freePort } from "../bench/service.ts";
import { withTempDir } from "./helpers.ts";

const root = new URL("..", import.meta.url).pathname;

Deno.test("a manual start under umask 022 creates live.db and test.db (and their journals) 0600", async () => {
  await withTempDir(async (dataDir) => {
    const port = freePort();
    const service = new Deno.Command("sh", {
      args: ["-c", `umask 022 && exec "${Deno.execPath()}" run -A --unstable-cron ${root}main.ts`],
      env: {
        DATA_DIR: dataDir,
        PORT: String(port),
        JWT_SECRET: "j".repeat(40),
        ENCRYPTION_KEY: btoa("e".repeat(32)),
        LIVE_NOTIFICATIONS: "off",
        LOG_FORMAT: "off",
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
      const modes: Record<string, string> = {};
      for await (const entry of Deno.readDir(dataDir)) {
        if (!entry.isFile || !/^(live|test)\.db/.test(entry.name)) continue;
        modes[entry.name] = ((await Deno.stat(`${dataDir}/${entry.name}`)).mode! & 0o777)
          .toString(8);
      }
      assert.ok("live.db" in modes && "test.db" in modes, JSON.stringify(modes));
      for (const [name, mode] of Object.entries(modes)) assert.equal(mode, "600", name);
    } finally {
      service.kill("SIGTERM");
      await service.status;
      await stderr;
    }
  });
});
