/** Surface B under concurrency: idempotent creates never hold twice (contract §7). */
import assert from "node:assert/strict";
import fc from "fast-check";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

async function prepare(f: HttpFixture, cents: number) {
  await fundAcmeAuto(f, cents);
  const payee = await post(f, "/v1/payees", { id: "noaction", email: "n@example.test" });
  assert.equal(payee.status, 201);
}

function post(f: HttpFixture, path: string, body: unknown, idempotencyKey?: string) {
  return f.app.request(path, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
      ...(idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {}),
    },
    body: JSON.stringify(body),
  });
}

async function count(f: HttpFixture, sql: string): Promise<number> {
  return Number((await f.deps.databases.test.readClient.execute(sql)).rows[0].n);
}

Deno.test("2,000 creates from 50 concurrent clients, 20 % replays: 1,600 disbursements and holds, replays identical", async () => {
  await withHttpFixture(async (f) => {
    await prepare(f, 100_000_000);
    const originals = new Map<string, string>();
    let replays = 0;
    await Promise.all(Array.from({ length: 50 }, async (_, client) => {
      const mine: { key: string; body: unknown }[] = [];
      for (let i = 0; i < 40; i++) {
        // Every fifth request of a client repeats one of its earlier requests, key and body.
        const again = i % 5 === 4 ? mine[(i * 7) % mine.length] : null;
        const request = again ?? {
          key: `c${client}-r${i}`,
          body: {
            amount: (100 + client * 40 + i) / 100,
            claim_id: `CLM-${client}-${i}`,
            payee: { id: "noaction" },
            modalities: ["ach"],
          },
        };
        if (!again) mine.push(request);
        const res = await post(f, "/v1/disbursements", request.body, request.key);
        const text = await res.text();
        assert.equal(res.status, 201, text);
        if (again) {
          replays++;
          assert.equal(res.headers.get("idempotent-replayed"), "true");
          assert.equal(
            text,
            originals.get(request.key),
            "a replay is the first response byte for byte",
          );
        } else {
          originals.set(request.key, text);
        }
      }
    }));
    assert.equal(replays, 400);
    assert.equal(await count(f, "SELECT count(*) AS n FROM disbursements"), 1_600);
    assert.equal(
      await count(f, "SELECT count(*) AS n FROM ledger_transactions WHERE kind = 'payout.hold'"),
      1_600,
    );
    const expectedHeld = [...originals.values()].reduce(
      (sum, text) => sum + Math.round(JSON.parse(text).amount * 100),
      0,
    );
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.equal(balances.reserved, expectedHeld, "every disbursement held exactly once");
    assert.equal(balances.available, 100_000_000 - expectedHeld);
    assert.deepEqual(await verifyLedger(f.deps.databases.test.readClient), []);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("100 rounds of 20 parallel identical creates make one disbursement per round", async () => {
  await withHttpFixture(async (f) => {
    await prepare(f, 10_000_000);
    for (let round = 0; round < 100; round++) {
      const body = {
        amount: 10,
        claim_id: `R${round}`,
        payee: { id: "noaction" },
        modalities: ["ach"],
      };
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => post(f, "/v1/disbursements", body, `round-${round}`)),
      );
      const statuses = responses.map((r) => r.status);
      await Promise.all(responses.map((r) => r.body?.cancel()));
      assert.ok(statuses.every((s) => s === 201 || s === 409), `round ${round}: ${statuses}`);
      assert.ok(statuses.includes(201), `round ${round}`);
    }
    assert.equal(await count(f, "SELECT count(*) AS n FROM disbursements"), 100);
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.equal(balances.reserved, 100 * 1_000);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("property: 500 single-field changes to a used key's body are all 422 and change nothing", async () => {
  await withHttpFixture(async (f) => {
    await prepare(f, 1_000_000);
    await post(f, "/v1/payees", { id: "other", email: "o@example.test" });
    const original = {
      amount: 25.5,
      claim_id: "CLM-1",
      payee: { id: "noaction" },
      modalities: ["ach", "check"],
      metadata: { a: "1" },
    };
    assert.equal((await post(f, "/v1/disbursements", original, "used-key")).status, 201);
    const snapshot = async () => ({
      rows: await count(f, "SELECT count(*) AS n FROM disbursements") +
        await count(f, "SELECT count(*) AS n FROM ledger_entries"),
      balances: await readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId),
    });
    const before = await snapshot();
    const mutation = fc.oneof(
      fc.integer({ min: 1, max: 100_000_00 }).filter((c) => c !== 2550).map((c) => ({
        amount: c / 100,
      })),
      fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s !== "CLM-1").map((s) => ({
        claim_id: s,
      })),
      fc.constant({ payee: { id: "other" } }),
      fc.subarray(["ach", "check", "vcc", "venmo", "paypal"], { minLength: 1 })
        .filter((m) => m.join() !== "ach,check")
        .map((m) => ({ modalities: m })),
      // Reserved keys are a 400 before the key is looked at (http_v1_test covers them).
      fc.dictionary(
        fc.string({ minLength: 1, maxLength: 10 }).filter((k) =>
          !["__proto__", "constructor", "prototype"].includes(k)
        ),
        fc.string({ maxLength: 10 }),
        { maxKeys: 3 },
      )
        .filter((m) => JSON.stringify(m) !== '{"a":"1"}')
        .map((m) => ({ metadata: m })),
    );
    await fc.assert(
      fc.asyncProperty(mutation, async (change) => {
        const res = await post(f, "/v1/disbursements", { ...original, ...change }, "used-key");
        const body = await res.json() as { code: string };
        assert.equal(res.status, 422, JSON.stringify(change));
        assert.equal(body.code, "idempotency_key_reused");
      }),
      { numRuns: 500 },
    );
    assert.deepEqual(await snapshot(), before);
  }, { RATE_LIMIT_RPS: "0" });
});
