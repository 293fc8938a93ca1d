/**
 * End to end: `main.ts --dev` as a developer runs it, on a temporary DATA_DIR and a free
 * loopback port: readiness, the credentials file, both surfaces with the seeded keys, the
 * writer lock against a second process, graceful stop, and a restart that keeps the seed.
 */
import assert from "node:assert/strict";
import { freePort } from "../bench/service.ts";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";

const mainPath = new URL("../main.ts", import.meta.url).pathname;

function start(dataDir: string, port: number) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", mainPath, "--dev"],
    env: { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", LOG_FORMAT: "off" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function waitReady(baseUrl: string, child: Deno.ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill("SIGKILL");
  throw new Error("the dev service did not become ready in 60 s");
}

Deno.test("deno task dev: seeded sandbox, credentials file, both surfaces, lock, graceful stop, restart", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-e2e-" });
  const port = freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = start(dataDir, port);
  try {
    await waitReady(baseUrl, child);
    const file = `${dataDir}/sandbox-credentials.json`;
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600, "the credentials file is private");
    const credentials = JSON.parse(await Deno.readTextFile(file)) as SandboxCredentials;
    assert.equal(credentials.base_url, baseUrl);
    assert.deepEqual(credentials.companies.map((c) => c.name), ["Acme Mutual", "Beacon Casualty"]);
    // Four operators, so dual control, roles and payment approvals can be tried in dev.
    assert.deepEqual(credentials.operators?.map((o) => [o.email, o.role]), [
      ["admin@sandbox.test", "admin"],
      ["admin2@sandbox.test", "admin"],
      ["clerk@sandbox.test", "clerk"],
      ["viewer@sandbox.test", "viewer"],
    ]);
    assert.deepEqual(credentials.operator, {
      email: "admin@sandbox.test",
      password: credentials.operators![0].password,
    });
    for (const operator of credentials.operators!) assert.match(operator.password, /^\w{24}$/);
    assert.equal(await Deno.readTextFile(`${dataDir}/dev-mode`).then(() => true), true);
    assert.deepEqual(credentials.companies.map((c) => c.lines.map((l) => l.line)), [[
      "auto",
      "home",
    ], ["default"]]);
    for (const company of credentials.companies) {
      assert.match(company.tin, /^\d{9}$/);
      assert.match(company.company_api_key, /^cak_[0-9A-Za-z]{32}$/);
      assert.equal(company.users.length, 1);
      assert.match(company.users[0].api_key_test, /^uak_test_/);
      assert.match(company.users[0].api_key_live, /^uak_live_/);
      for (const line of company.lines) {
        assert.match(line.key_test, /^sk_test_/);
        assert.match(line.key_live, /^sk_live_/);
      }
    }
    assert.deepEqual(credentials.multi_company_user.tins, credentials.companies.map((c) => c.tin));

    // Surface A with the seeded user, and the multi-company user choosing Beacon.
    const [acme, beacon] = credentials.companies;
    const login = await fetch(`${baseUrl}/api/authenticate`, {
      method: "POST",
      headers: { Authorization: `Basic ${btoa(`${acme.tin}:${acme.users[0].api_key_test}`)}` },
    });
    assert.equal(login.status, 200);
    assert.equal((await login.json()).expires_in, 3600);
    const multi = await fetch(`${baseUrl}/api/authenticate`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${
          btoa(`${beacon.tin}:${credentials.multi_company_user.api_key_test}`)
        }`,
        CompanyApiKey: beacon.company_api_key,
      },
    });
    assert.equal(multi.status, 200);
    await multi.body?.cancel();

    // Surface B: every seeded line holds $1,000,000.00 available in test.
    for (
      const [company, line] of [[acme, acme.lines[0]], [acme, acme.lines[1]], [
        beacon,
        beacon.lines[0],
      ]] as const
    ) {
      const res = await fetch(`${baseUrl}/v1/ledgers/${line.line}/balance`, {
        headers: { Authorization: `Bearer ${line.key_test}` },
      });
      assert.equal(res.status, 200, `${company.name}/${line.line}`);
      const balance = await res.json();
      assert.equal(balance.available, 1_000_000);
      assert.equal(balance.livemode, false);
    }
    const inbox = await fetch(`${baseUrl}/sandbox/inbox.json`);
    assert.deepEqual(await inbox.json(), { object: "list", data: [] });

    // A second process on the same DATA_DIR is refused: one writer per database file.
    const second = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", mainPath, "--dev"],
      env: { DATA_DIR: dataDir, PORT: String(freePort()), LOG_FORMAT: "off" },
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(second.success, false);
    assert.match(new TextDecoder().decode(second.stderr), /DATA_DIR|lock|another process/i);

    child.kill("SIGTERM");
    const status = await child.status;
    assert.equal(status.code, 0, "SIGTERM stops the service cleanly");
    const printed = new TextDecoder().decode(
      (await child.stdout.getReader().read()).value ?? new Uint8Array(),
    );
    assert.match(printed, new RegExp(acme.company_api_key), "the banner prints the credentials");

    // A restart keeps the seed: the same credentials still work and nothing is seeded twice.
    const again = start(dataDir, port);
    try {
      await waitReady(baseUrl, again);
      const stillThere = JSON.parse(await Deno.readTextFile(file)) as SandboxCredentials;
      assert.deepEqual(stillThere, credentials);
      const res = await fetch(`${baseUrl}/v1/ledgers/auto/balance`, {
        headers: { Authorization: `Bearer ${acme.lines[0].key_test}` },
      });
      assert.equal((await res.json()).available, 1_000_000, "restart did not fund twice");
    } finally {
      again.kill("SIGTERM");
      await again.status;
      await again.stdout.cancel();
      await again.stderr.cancel();
    }
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already stopped
    }
    await child.stderr.cancel().catch(() => {});
    await Deno.remove(dataDir, { recursive: true });
  }
});
