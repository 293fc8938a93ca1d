/**
 * What the live end-to-end tests of the provider rails (virtual cards, instant deposit) share: two
 * admins, the OFAC list loaded, a temporary folder for settings files, the live database's rows and
 * jobs, a provider's settings requested by one admin and approved by the other, and a wire funding
 * recorded by one and approved by the other.
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import { createApp } from "../routes/app.ts";
import { api } from "./api_helpers.ts";
import type { HttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";

const SDN_CSV = '7001,"KARIMOV, Rustam","individual","SDGT",-0-,-0-\r\n\x1a';

export interface LiveRun {
  readonly f: HttpFixture;
  readonly app: ReturnType<typeof createApp>;
  readonly acme: HttpFixture["cast"]["acme"];
  /** Acme's live key, for /api. */
  readonly asLive: { key: string; tin: string };
  readonly asAlice: ReturnType<typeof adminCall>;
  readonly asBruno: ReturnType<typeof adminCall>;
  readonly dir: string;
  rows(sql: string, ...args: (string | number)[]): Promise<Record<string, unknown>[]>;
  /** Runs Acme's live jobs due at the fixture's time. */
  run(): Promise<unknown>;
}

/** Two admins (alice, bruno) and the OFAC list in live, then `fn`; the folder goes after. */
export async function withLiveRun(
  f: HttpFixture,
  fn: (r: LiveRun) => Promise<void>,
): Promise<void> {
  const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
  const live = f.deps.databases.live;
  const acme = f.cast.acme;
  const now = f.clock.now();
  const alice = await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now);
  const bruno = await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now);
  const dir = await Deno.makeTempDir({ prefix: "provider-e2e-" });
  const r: LiveRun = {
    f,
    app,
    acme,
    asLive: { key: f.cast.alice.keyLive, tin: acme.tin },
    asAlice: adminCall(app, alice.token),
    asBruno: adminCall(app, bruno.token),
    dir,
    rows: async (sql, ...args) =>
      (await live.readClient.execute({ sql, args })).rows.map((row) => ({ ...row })),
    run: () =>
      runDueJobs(live, acme.id, f.clock.now(), f.deps.jobHandlers.live, { clock: f.clock }),
  };
  try {
    await Deno.writeTextFile(`${dir}/sdn.csv`, SDN_CSV);
    assert.equal((await r.asAlice("ofac:load", { file: `${dir}/sdn.csv` })).status, 200);
    await fn(r);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A provider's settings, asked for by alice (`<provider>:set`), saved once bruno approves. */
export async function approvedSettings(
  r: LiveRun,
  command: string,
  settings: Record<string, unknown>,
): Promise<{ kind: string; status: string }> {
  const path = `${r.dir}/${command.replace(":", "-")}.json`;
  await Deno.writeTextFile(path, JSON.stringify(settings));
  const requested = await r.asAlice(command, { tin: r.acme.tin, file: path });
  assert.equal(requested.status, 200, JSON.stringify(requested.body));
  const approved = await r.asBruno("approvals:approve", { id: requested.body.result.approval_id });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  return requested.body.result;
}

/** A wire of `dollars` to Acme's auto line, recorded by alice and approved by bruno. */
export async function fundByWire(r: LiveRun, dollars: number): Promise<void> {
  const funded = await api(r.f, "POST", "/api/funds", {
    payment_method: "WireTransfer",
    amount: dollars,
    description: "wire",
    large_disbursement: false,
    line: "auto",
  }, r.asLive);
  assert.equal(funded.status, 201, await funded.clone().text());
  const wire = await r.asAlice("wire:receive", {
    funding: (await funded.json()).funding_uuid as string,
  });
  const approved = await r.asBruno("approvals:approve", { id: wire.body.result.approval_id });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
}
