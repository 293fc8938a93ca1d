/**
 * What a create costs in round trips to a libSQL primary (the Hrana contract server counts the
 * HTTP requests it receives): every request is a round trip, made while the primary's write lock
 * is held for those inside the write unit. Guards the issue-22 target of at most 5 per create.
 */
import assert from "node:assert/strict";
import { readLineBalances } from "../lib/ledger/store.ts";
import { parties, payee } from "./api_helpers.ts";
import { basic, fundAcmeAuto, fundBeacon } from "./http_fixture.ts";
import { openRemoteHttpFixture, type RemoteHttpFixture } from "./remote_fixture.ts";

const CREATE_REQUESTS_MAX = 5;

async function withRemoteFixture(fn: (f: RemoteHttpFixture) => Promise<void>): Promise<void> {
  const f = await openRemoteHttpFixture({ RATE_LIMIT_RPS: "0" });
  try {
    await fundAcmeAuto(f, 1_000_000);
    await fn(f);
  } finally {
    await f.close();
  }
}

async function v1Create(f: RemoteHttpFixture, key: string | null, amount = 1): Promise<Response> {
  return await f.app.request("/v1/disbursements", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
      ...(key === null ? {} : { "Idempotency-Key": key }),
    },
    body: JSON.stringify({ amount, claim_id: "C-1", payee: { id: "p1" }, modalities: ["ach"] }),
  });
}

/** The requests the test database's primary received while `fn` ran. */
async function requestsOf(f: RemoteHttpFixture, fn: () => Promise<void>): Promise<number> {
  f.primaries.test.resetCount();
  await fn();
  return f.primaries.test.requestCount();
}

Deno.test("remote round trips: a /v1 create, keyed or not, and a replay stay within the budget", async () => {
  await withRemoteFixture(async (f) => {
    const payeeCreated = await f.app.request("/v1/payees", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ id: "p1", email: "p1@example.test" }),
    });
    assert.equal(payeeCreated.status, 201);

    let first: Record<string, unknown> = {};
    const keyed = await requestsOf(f, async () => {
      const created = await v1Create(f, "key-1", 12.34);
      assert.equal(created.status, 201);
      first = await created.json();
    });
    assert.ok(keyed <= CREATE_REQUESTS_MAX, `a keyed create took ${keyed} requests`);

    const unkeyed = await requestsOf(f, async () => {
      assert.equal((await v1Create(f, null)).status, 201);
    });
    assert.ok(unkeyed < keyed, `an unkeyed create took ${unkeyed}, a keyed one ${keyed}`);

    const replay = await requestsOf(f, async () => {
      const replayed = await v1Create(f, "key-1", 12.34);
      assert.equal(replayed.status, 201);
      assert.deepEqual(await replayed.json(), first);
    });
    assert.ok(replay <= 3, `a replay took ${replay} requests`);

    // The batched writes are all there: the hold of both creates, balanced.
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.deepEqual([balances.available, balances.reserved], [1_000_000 - 1334, 1334]);
    const { rows } = await f.deps.databases.test.readClient.execute(
      `SELECT (SELECT count(*) FROM events WHERE type = 'disbursement.created') AS events,
              (SELECT count(*) FROM scheduled_jobs WHERE kind = 'payout.offer') AS jobs,
              (SELECT count(*) FROM payout_transitions) AS transitions,
              (SELECT count(*) FROM (SELECT transaction_id FROM ledger_entries
                GROUP BY transaction_id HAVING sum(amount_cents) <> 0)) AS unbalanced`,
    );
    assert.deepEqual({ ...rows[0] }, { events: 2, jobs: 2, transitions: 2, unbalanced: 0 });
  });
});

Deno.test("remote round trips: 20 concurrent keyed creates share groups and stay within the budget each", async () => {
  await withRemoteFixture(async (f) => {
    await f.app.request("/v1/payees", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ id: "p1", email: "p1@example.test" }),
    });
    const creates = 20;
    const requests = await requestsOf(f, async () => {
      const answers = await Promise.all(
        Array.from({ length: creates }, (_, i) => v1Create(f, `concurrent-${i}`)),
      );
      assert.deepEqual(answers.map((a) => a.status), Array(creates).fill(201));
      await Promise.all(answers.map((a) => a.body?.cancel()));
    });
    assert.ok(
      requests <= creates * CREATE_REQUESTS_MAX,
      `${creates} creates took ${requests} requests`,
    );
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.equal(balances.reserved, creates * 100);
  });
});

/** An access token for Acme, of a user who belongs to Acme (Alice) or to Acme and Beacon (Morgan). */
async function accessToken(f: RemoteHttpFixture, userKey: string): Promise<string> {
  const login = await f.app.request("/api/authenticate", {
    method: "POST",
    headers: { Authorization: basic(f.cast.acme.tin, userKey) },
  });
  assert.equal(login.status, 200);
  return ((await login.json()) as { access_token: string }).access_token;
}

Deno.test("remote round trips: an /api create is 4 requests, 5 with an Idempotency-Key, with a CompanyApiKey or without", async () => {
  await withRemoteFixture(async (f) => {
    await fundBeacon(f, 1_000_000);
    // Morgan's token is Acme's; the CompanyApiKey header makes the create Beacon's.
    const callers = {
      "the token's company": { token: await accessToken(f, f.cast.alice.keyTest), headers: {} },
      "a CompanyApiKey": {
        token: await accessToken(f, f.cast.morgan.keyTest),
        headers: { CompanyApiKey: f.cast.beacon.companyKey },
      },
    };
    // The caller's credentials, company and first line in one read outside the write lock; the
    // unit's reads, its writes with the answer's reads, and the COMMIT. A key adds its claim (the
    // lookup rides with the unit's reads); a replay is the caller, the claim, the lookup with the
    // use case's first reads, and the rollback with the COMMIT.
    const cases = [
      { caller: "the token's company", key: null, requests: 4 },
      { caller: "a CompanyApiKey", key: null, requests: 4 },
      { caller: "the token's company", key: "api-key-1", requests: CREATE_REQUESTS_MAX },
      { caller: "a CompanyApiKey", key: "api-key-2", requests: CREATE_REQUESTS_MAX },
    ] as const;
    for (const [i, { caller, key, requests: expected }] of cases.entries()) {
      const { token, headers } = callers[caller];
      const create = () =>
        f.app.request("/api/disbursements", {
          method: "POST",
          headers: {
            Authorization: `Bearer ${token}`,
            "Content-Type": "application/json",
            ...headers,
            ...(key === null ? {} : { "Idempotency-Key": key }),
          },
          body: JSON.stringify({
            disbursement_uuid: `CLM-${i}`,
            large_disbursement: false,
            payees: [payee("p-a", 10)],
            // Parties no payee needs: written with the answer's reads, and in the answer.
            authorization_parties: parties,
          }),
        });
      const name = `an /api create with ${caller}, ${key === null ? "no key" : "a key"}`;
      let first = "";
      const requests = await requestsOf(f, async () => {
        const created = await create();
        assert.equal(created.status, 201, name);
        first = await created.text();
      });
      assert.equal(requests, expected, name);
      const answered = JSON.parse(first) as { authorization_parties: { party_uuid: string }[] };
      assert.deepEqual(
        answered.authorization_parties.map((p) => p.party_uuid),
        ["lienholder", "co-owner"],
        name,
      );
      if (key === null) continue;
      const replayRequests = await requestsOf(f, async () => {
        const replayed = await create();
        assert.equal(replayed.status, 201, `${name}: replay`);
        assert.equal(replayed.headers.get("Idempotent-Replayed"), "true", `${name}: replay`);
        assert.equal(await replayed.text(), first, `${name}: replay`);
      });
      assert.equal(replayRequests, 4, `${name}: replay`);
    }
    const reserved = await Promise.all([f.cast.acme.autoLineId, f.cast.beacon.lineId].map(
      async (line) => (await readLineBalances(f.deps.databases.test.readClient, line)).reserved,
    ));
    assert.deepEqual(reserved, [2000, 2000]);
  });
});
