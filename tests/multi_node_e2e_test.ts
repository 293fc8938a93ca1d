/**
 * Two service processes on one libSQL primary (issue 22, the end-to-end proof): 200 concurrent
 * creates spread over both nodes, 20 % of them under a key already used, then node A is killed
 * with SIGKILL in the middle of the webhook drain. Afterwards: every acknowledged create exists
 * exactly once, every event was delivered at least once and at most twice, the ledger is
 * balanced (`deno task admin ledger:verify` sent through node B), and no job's effect committed
 * twice. Leases are short (idempotency 2 s; webhook claims 1.94 s, the dispatcher's floor for a
 * 500 ms timeout) so the survivor takes over fast.
 */
import assert from "node:assert/strict";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";
import {
  migratePrimary,
  primaryClient,
  runAdminCli,
  type ServiceNode,
  spawnNode,
  startPrimary,
  waitFor,
  waitReady,
} from "./node_helpers.ts";

const CREATES = 200;
/** One create in five reuses the key (and body) of an earlier one. */
const DUPLICATE_EVERY = 5;
/** The receiver answers after this long, so the drain lasts long enough to be cut. */
const RECEIVER_DELAY_MS = 60;
const NODE_ENV = {
  // The dispatcher's claim: its floor, 2 × 500 ms + the longest start delay (8 × (50 + 5) ms)
  // + the record's margin (500 ms) = 1.94 s.
  WEBHOOK_TIMEOUT_MS: "500",
  IDEMPOTENCY_LEASE_SECONDS: "2",
};

Deno.test("two nodes, 200 concurrent creates with 20 % duplicate keys, SIGKILL of one node mid-drain: created once, delivered 1-2 times, ledger balanced, no job effect twice", async () => {
  const received = new Map<string, number>();
  const receiver = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const id = request.headers.get("x-event-id") ?? "";
      await request.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, RECEIVER_DELAY_MS));
      received.set(id, (received.get(id) ?? 0) + 1);
      return new Response("ok");
    },
  );
  const primary = await startPrimary();
  const nodes: ServiceNode[] = [];
  try {
    await migratePrimary(primary);
    // A seeds the sandbox (its DATA_DIR gets the credentials file); B starts on the seeded data.
    nodes.push(await spawnNode(primary, NODE_ENV));
    await waitReady(nodes[0]);
    nodes.push(await spawnNode(primary, NODE_ENV));
    await waitReady(nodes[1]);
    const [a, b] = nodes;
    const credentials = JSON.parse(
      await Deno.readTextFile(`${a.dataDir}/sandbox-credentials.json`),
    ) as SandboxCredentials;
    const lineKey = credentials.companies[0].lines[0].key_test;
    const post = (node: ServiceNode, path: string, body: unknown, key?: string) =>
      fetch(`${node.base}${path}`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${lineKey}`,
          "Content-Type": "application/json",
          ...(key ? { "Idempotency-Key": key } : {}),
        },
        body: JSON.stringify(body),
      });

    const registered = await post(b, "/v1/webhooks", {
      url: `http://127.0.0.1:${receiver.addr.port}/hook`,
    });
    assert.equal(registered.status, 201);
    const endpointId = (await registered.json() as { id: string }).id;
    for (let i = 0; i < 10; i++) {
      const payee = await post(a, "/v1/payees", { id: `noaction-${i}`, email: `p${i}@x.test` });
      assert.equal(payee.status, 201);
      await payee.body?.cancel();
    }

    // Request i uses key i, except every fifth, which repeats the key of request i - 3.
    const keyOf = (i: number) => i % DUPLICATE_EVERY === 4 ? i - 3 : i;
    const answers = await Promise.all(Array.from({ length: CREATES }, async (_, i) => {
      const k = keyOf(i);
      const response = await post(nodes[i % 2], "/v1/disbursements", {
        amount: (1000 + k) / 100,
        claim_id: `E2E-${k}`,
        payee: { id: `noaction-${k % 10}` },
        modalities: ["ach"],
      }, `e2e-key-${k}`);
      const body = await response.json() as { id?: string };
      return { k, status: response.status, id: body.id ?? null };
    }));
    const acknowledged = answers.filter((answer) => answer.status === 201);
    for (const answer of answers) {
      // 409: the same key was running (on this node or the other); never anything else.
      assert.ok([201, 409].includes(answer.status), JSON.stringify(answer));
    }
    const keys = new Set(answers.map((answer) => answer.k));
    assert.equal(keys.size, CREATES - CREATES / DUPLICATE_EVERY);
    const idsByKey = new Map<number, Set<string>>();
    for (const { k, id } of acknowledged) idsByKey.set(k, (idsByKey.get(k) ?? new Set()).add(id!));
    assert.equal(idsByKey.size, keys.size, "every key was acknowledged at least once");
    for (const [k, ids] of idsByKey) assert.equal(ids.size, 1, `key ${k}: one disbursement`);

    // Kill A once part of the drain is done, while deliveries are still due or in flight.
    const test = primaryClient(primary, "test");
    const deliveries = async () =>
      (await test.execute({
        sql: "SELECT event_id, status FROM webhook_deliveries WHERE endpoint_id = ?",
        args: [endpointId],
      })).rows.map((row) => ({ eventId: String(row.event_id), status: String(row.status) }));
    await waitFor(() => Promise.resolve(received.size >= 60), 60_000, "the drain to start");
    const beforeKill = (await deliveries()).filter((d) => d.status !== "succeeded").length;
    a.process.kill("SIGKILL");
    await a.process.status;
    assert.ok(beforeKill > 0, "deliveries were still pending when A was killed");

    await waitFor(
      async () => (await deliveries()).every((d) => d.status === "succeeded"),
      90_000,
      "node B to deliver everything, A's expired claims included",
    );
    const all = await deliveries();
    for (const { eventId } of all) {
      const times = received.get(eventId) ?? 0;
      assert.ok(times >= 1 && times <= 2, `event ${eventId} delivered ${times} times`);
    }
    console.log(JSON.stringify({
      creates: CREATES,
      keys: keys.size,
      acknowledged: acknowledged.length,
      in_progress_409: answers.length - acknowledged.length,
      events: all.length,
      undelivered_at_kill: beforeKill,
      delivered_twice: all.filter(({ eventId }) => received.get(eventId) === 2).length,
    }));

    // Every acknowledged create exists exactly once; nothing else was created.
    const { rows: created } = await test.execute(
      "SELECT claim_id, count(*) AS n FROM disbursements WHERE claim_id LIKE 'E2E-%' GROUP BY claim_id",
    );
    assert.equal(created.length, keys.size);
    for (const row of created) assert.equal(Number(row.n), 1, `${row.claim_id} created once`);
    for (const [k, ids] of idsByKey) {
      const { rows } = await test.execute({
        sql: "SELECT claim_id FROM disbursements WHERE id = ?",
        args: [[...ids][0]],
      });
      assert.equal(rows[0]?.claim_id, `E2E-${k}`);
    }

    // No job's effect committed twice: each payout's offer job moved it and told of it once.
    const { rows: offers } = await test.execute(
      `SELECT j.id, j.done_at, j.error,
          (SELECT count(*) FROM events e WHERE e.payout_id = j.subject_id
             AND e.type = 'disbursement.modality_offered') AS effects
        FROM scheduled_jobs j WHERE j.kind = 'payout.offer'`,
    );
    assert.equal(offers.length, keys.size);
    for (const job of offers) {
      assert.equal(job.error, null);
      assert.notEqual(job.done_at, null, `job ${job.id} done`);
      assert.equal(Number(job.effects), 1, `job ${job.id} committed its effect once`);
    }
    const { rows: holds } = await test.execute(
      `SELECT p.id, count(t.id) AS n FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
        LEFT JOIN ledger_transactions t ON t.payout_id = p.id
        WHERE d.claim_id LIKE 'E2E-%' GROUP BY p.id`,
    );
    for (const hold of holds) assert.equal(Number(hold.n), 1, `payout ${hold.id}: one hold`);
    test.close();

    // The operator CLI talks to the surviving node (B's DATA_DIR: its service file and token).
    const cliEnv = { ...primary.env(), DATA_DIR: b.dataDir };
    const operator = credentials.operator!;
    const login = await runAdminCli(
      cliEnv,
      ["login"],
      `${operator.email}\n${operator.password}\n\n`,
    );
    assert.equal(login.code, 0, login.stderr);
    const verified = await runAdminCli(cliEnv, ["ledger:verify", "--json"]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.deepEqual(JSON.parse(verified.stdout), { live: "balanced", test: "balanced" });
  } finally {
    for (const node of nodes) await node.stop();
    await primary.close();
    await receiver.shutdown();
  }
});
