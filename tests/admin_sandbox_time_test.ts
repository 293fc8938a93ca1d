/**
 * An operator's command on the test environment acts at the company's sandbox time, as the
 * sandbox's own jobs and moves do; in live, at the real time.
 */
import assert from "node:assert/strict";
import { runAdminCommand } from "../lib/admin/commands.ts";
import { runtimeSettingsOf } from "../lib/payouts/settings.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const DAY = 86_400_000;

function cli(f: HttpFixture, name: string, flags: Record<string, string>) {
  return runAdminCommand(
    {
      databases: f.deps.databases,
      now: f.clock.now(),
      keyGraceSeconds: 86_400,
      secretBox: f.deps.secretBox,
      runtimeSettings: runtimeSettingsOf(f.deps.config),
      dev: true,
      origin: "cli",
      sessionToken: null,
      input: {},
    },
    name,
    flags,
  );
}

Deno.test("funding:return in test posts at the company's sandbox time, not the real time", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 5_000, "ACH");
    const test = f.deps.databases.test;
    await test.writer.write((tx) =>
      tx.execute({
        sql: `INSERT INTO sandbox_clocks (company_id, offset_ms, updated_at) VALUES (?, ?, ?)
              ON CONFLICT (company_id) DO UPDATE SET offset_ms = excluded.offset_ms`,
        args: [f.cast.acme.id, 3 * DAY, f.clock.now()],
      })
    );
    const { rows: [funding] } = await test.readClient.execute(
      "SELECT id FROM fundings WHERE payment_method = 'ACH'",
    );
    const returned = await cli(f, "funding:return", {
      funding: String(funding.id),
      environment: "test",
    });
    assert.deepEqual(returned, {
      ok: true,
      value: { environment: "test", funding_id: String(funding.id), status: "Returned" },
    });
    const { rows: [returnedFunding] } = await test.readClient.execute({
      sql: "SELECT completed_at FROM fundings WHERE id = ?",
      args: [funding.id],
    });
    assert.equal(Number(returnedFunding.completed_at), f.clock.now() + 3 * DAY);
  });
});
