/**
 * No answer leaves before what it says is durable: a read may see a commit whose WAL sync still
 * runs (db/wal_sync.ts), so every answer waits for the syncs running when it is ready.
 */
import assert from "node:assert/strict";
import { forgetCommits, trackCommits } from "../lib/platform/durability.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

/** Commits a sync has not reached yet, until the test says `synced()` or `failed()`. */
function commitsBeingSynced() {
  let end!: () => void;
  let fail!: (error: Error) => void;
  const sync = new Promise<void>((resolve, reject) => {
    end = resolve;
    fail = reject;
  });
  sync.catch(() => {});
  const commits = {
    durableNow: false,
    durable: () => sync,
  };
  return {
    commits,
    synced: () => {
      commits.durableNow = true;
      end();
    },
    failed: (error: Error) => fail(error),
  };
}

function create(f: HttpFixture, key: string) {
  return f.app.request("/v1/disbursements", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
      "Idempotency-Key": key,
    },
    body: JSON.stringify({
      amount: 10,
      claim_id: "CLM-DURABLE",
      payee: { id: "noaction" },
      modalities: ["ach"],
    }),
  });
}

/** Whether `answer` settles within a few turns of the event loop. */
async function settlesSoon(answer: Response | Promise<Response>): Promise<boolean> {
  const soon = new Promise<false>((resolve) => setTimeout(() => resolve(false), 50));
  return await Promise.race([Promise.resolve(answer).then(() => true), soon]);
}

Deno.test("a read and an idempotent replay are answered only once the commits they may have seen are durable", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 1_000);
    const payee = await f.app.request("/v1/payees", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ id: "noaction", email: "n@example.test" }),
    });
    assert.equal(payee.status, 201);
    const created = await create(f, "durable-1");
    assert.equal(created.status, 201);
    const { id } = await created.json();

    const syncing = commitsBeingSynced();
    trackCommits(syncing.commits);
    try {
      const read = Promise.resolve(f.app.request(`/v1/disbursements/${id}`, {
        headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
      }));
      const replay = Promise.resolve(create(f, "durable-1"));
      assert.equal(await settlesSoon(read), false);
      assert.equal(await settlesSoon(replay), false);
      syncing.synced();
      const [readAnswer, replayAnswer] = await Promise.all([read, replay]);
      assert.equal(readAnswer.status, 200);
      assert.equal((await readAnswer.json()).id, id);
      assert.equal(replayAnswer.status, 201);
      assert.equal((await replayAnswer.json()).id, id);
    } finally {
      forgetCommits(syncing.commits);
    }
  });
});

Deno.test("an answer whose commits could not be synced is a 500, in the surface's own error format", async () => {
  await withHttpFixture(async (f) => {
    const syncing = commitsBeingSynced();
    trackCommits(syncing.commits);
    try {
      const read = Promise.resolve(f.app.request("/v1/ledgers/auto/balance", {
        headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
      }));
      assert.equal(await settlesSoon(read), false);
      const originalError = console.error;
      const errors: string[] = [];
      console.error = (line: string) => errors.push(line);
      let answer: Response;
      try {
        syncing.failed(new Error("disk I/O error: the WAL was not synced"));
        answer = await read;
      } finally {
        console.error = originalError;
      }
      assert.equal(answer.status, 500);
      const id = answer.headers.get("x-request-id");
      assert.deepEqual(await answer.json(), {
        type: "/docs/errors#internal_error",
        title: "Internal Server Error",
        status: 500,
        detail: `an internal error occurred; quote request id ${id} when reporting it`,
        code: "internal_error",
      });
      assert.equal(errors.length, 1);
      assert.match(JSON.parse(errors[0]).error, /the WAL was not synced/);
    } finally {
      forgetCommits(syncing.commits);
    }
  });
});
