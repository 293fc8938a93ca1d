/** The committed-read cache of /v1 disbursements: never stale, never another scope's. */
import assert from "node:assert/strict";
import { applyMove } from "../lib/payouts/store.ts";
import { loadV1Disbursement, readV1Disbursement } from "../lib/disbursements/v1_store.ts";
import { CommittedReadCache } from "../lib/platform/committed_read_cache.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";

Deno.test("cache: a copy read before an invalidation is not kept; one read after is", () => {
  const cache = new CommittedReadCache<string>(10);
  const before = cache.generation();
  cache.invalidate(["dsb_other"]);
  cache.put("dsb_1", "read before the commit", before);
  assert.equal(cache.get("dsb_1"), undefined);
  cache.put("dsb_1", "read after the commit", cache.generation());
  assert.equal(cache.get("dsb_1"), "read after the commit");
  cache.invalidate(["dsb_1"]);
  assert.equal(cache.get("dsb_1"), undefined);
});

Deno.test("cache: full, it drops the least recently used copy; size 0 keeps nothing", () => {
  const cache = new CommittedReadCache<number>(2);
  cache.put("a", 1, cache.generation());
  cache.put("b", 2, cache.generation());
  assert.equal(cache.get("a"), 1);
  cache.put("c", 3, cache.generation());
  assert.deepEqual([cache.get("a"), cache.get("b"), cache.get("c"), cache.size], [
    1,
    undefined,
    3,
    2,
  ]);
  const off = new CommittedReadCache<number>(0);
  off.put("a", 1, off.generation());
  assert.deepEqual([off.get("a"), off.size], [undefined, 0]);
});

Deno.test("writer: commit listeners hear the changed rows after the commit, and not for a failed group", async () => {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir);
    const heard: string[][] = [];
    database.writer.onCommit((changed) => heard.push([...changed]));
    await database.writer.write((tx) =>
      tx.execute("CREATE TABLE probe(id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
    );
    assert.deepEqual(heard, [], "a group that names no row is not announced");
    await Promise.all([
      database.writer.write(async (tx) => {
        await tx.execute("INSERT INTO probe(v) VALUES ('a')");
        tx.changed("dsb_a");
        assert.deepEqual(heard, [], "not before the commit");
      }),
      database.writer.write((tx) => {
        tx.changed("dsb_b");
        return Promise.resolve();
      }),
    ]);
    assert.deepEqual(heard, [["dsb_a", "dsb_b"]]);
    // A deferred foreign key fails at COMMIT, after the unit named its row: nothing changed.
    await database.writer.write((tx) =>
      tx.execute(
        "CREATE TABLE child(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES probe(id) DEFERRABLE INITIALLY DEFERRED)",
      )
    );
    const failed = database.writer.write(async (tx) => {
      await tx.execute("INSERT INTO child(parent) VALUES (999)");
      tx.changed("dsb_c");
    });
    await assert.rejects(failed, /write group was not committed/);
    assert.deepEqual(heard, [["dsb_a", "dsb_b"]]);
    await database.close();
  });
});

function call(
  f: HttpFixture,
  path: string,
  options: { key?: string; method?: string; body?: unknown } = {},
): Promise<Response> {
  return Promise.resolve(f.app.request(path, {
    method: options.method ?? "GET",
    headers: {
      Authorization: `Bearer ${options.key ?? f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  }));
}

/** A funded line, a payee who never acts, and one disbursement to it. */
async function createDisbursement(f: HttpFixture): Promise<string> {
  await fundAcmeAuto(f, 10_000);
  const payee = { id: "noaction", email: "n@example.test" };
  assert.equal((await call(f, "/v1/payees", { method: "POST", body: payee })).status, 201);
  const res = await call(f, "/v1/disbursements", {
    method: "POST",
    body: { amount: 10, claim_id: "CACHE", payee: { id: "noaction" }, modalities: ["ach"] },
  });
  assert.equal(res.status, 201);
  return (await res.json() as { id: string }).id;
}

const statusOf = async (res: Response) => (await res.json() as { status: string }).status;

Deno.test("GET /v1/disbursements/{id} from the cache shows every move at once and no other scope", async () => {
  await withHttpFixture(async (f) => {
    const id = await createDisbursement(f);
    const reads = f.deps.databases.test.disbursementReads;
    assert.equal(await statusOf(await call(f, `/v1/disbursements/${id}`)), "created");
    assert.equal(reads.size, 1, "the read is kept");
    for (const key of [f.cast.beaconKeyTest, f.cast.acmeAutoKeyLive]) {
      const other = await call(f, `/v1/disbursements/${id}`, { key });
      assert.equal(other.status, 404, "a cached copy is still another company's or environment's");
      await other.body?.cancel();
    }
    // The offer job moves it inside a write unit of its own.
    const advanced = await call(f, "/v1/sandbox/clock/advance", {
      method: "POST",
      body: { seconds: 1 },
    });
    assert.equal(advanced.status, 200);
    await advanced.body?.cancel();
    assert.equal(await statusOf(await call(f, `/v1/disbursements/${id}`)), "modality_offered");
    const canceled = await call(f, `/v1/disbursements/${id}/cancel`, { method: "POST" });
    assert.equal(canceled.status, 200);
    await canceled.body?.cancel();
    const after = await (await call(f, `/v1/disbursements/${id}`)).json() as {
      status: string;
      timeline: { status: string }[];
    };
    assert.equal(after.status, "canceled");
    assert.deepEqual(after.timeline.map((t) => t.status), [
      "created",
      "modality_offered",
      "canceled",
    ]);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("a read that ran while a move was not yet committed is not served after the commit", async () => {
  await withHttpFixture(async (f) => {
    const id = await createDisbursement(f);
    const database = f.deps.databases.test;
    const scope = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
    const { payoutId } = (await loadV1Disbursement(database.readClient, scope, id))!;
    await database.writer.write(async (tx) => {
      const moved = await applyMove(tx, payoutId, { kind: "cancel" }, f.clock.now());
      assert.equal(moved.ok, true);
      // A GET meanwhile reads the last committed state, and it may keep it until the commit.
      const during = await readV1Disbursement(database, scope, id);
      assert.equal(during?.status, "created");
    });
    assert.equal((await readV1Disbursement(database, scope, id))?.status, "canceled");
    assert.equal(await statusOf(await call(f, `/v1/disbursements/${id}`)), "canceled");
  }, { RATE_LIMIT_RPS: "0" });
});
