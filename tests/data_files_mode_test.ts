/**
 * A manual start (no systemd unit and its UMask=0077) still keeps the data directory private:
 * the service sets its own umask, so the databases it creates are 0600, not 0644.
 */
import assert from "node:assert/strict";
import { withTempDir } from "./helpers.ts";
import { SERVICE_SECRETS, startServiceProcess } from "./service_process.ts";

Deno.test("a manual start under umask 022 creates live.db and test.db (and their journals) 0600", async () => {
  await withTempDir(async (dataDir) => {
    const service = await startServiceProcess(dataDir, {
      env: SERVICE_SECRETS,
      command: (args) => ({
        program: "sh",
        args: ["-c", 'umask 022 && exec "$0" "$@"', Deno.execPath(), ...args],
      }),
    });
    try {
      const modes: Record<string, string> = {};
      for await (const entry of Deno.readDir(dataDir)) {
        if (!entry.isFile || !/^(live|test)\.db/.test(entry.name)) continue;
        modes[entry.name] = ((await Deno.stat(`${dataDir}/${entry.name}`)).mode! & 0o777)
          .toString(8);
      }
      assert.ok("live.db" in modes && "test.db" in modes, JSON.stringify(modes));
      for (const [name, mode] of Object.entries(modes)) assert.equal(mode, "600", name);
    } finally {
      await service.stop();
    }
  });
});
