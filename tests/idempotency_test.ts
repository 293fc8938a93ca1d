import assert from "node:assert/strict";
import { purgeExpiredIdempotency } from "../lib/idempotency/store.ts";
import {
  canonicalJson,
  decideIdempotency,
  idempotencyKeyProblem,
  requestFingerprint,
} from "../lib/idempotency/rules.ts";
import type { AppEnv } from "../routes/context.ts";
import { errorResponse } from "../routes/errors.ts";
import { refusalOutcome, respondIdempotently } from "../routes/idempotency.ts";
import { ok, refuse, type Result } from "../lib/platform/result.ts";
import { type HttpFixture, openHttpFixture } from "./http_fixture.ts";
import type { Context } from "hono";

Deno.test("decideIdempotency: every case of contract §7", () => {
  const now = 1_000_000;
  const record = (
    status: "in_progress" | "complete",
    leaseUntil: number | null,
    expiresAt = now + 1,
  ) => ({
    fingerprint: "f1",
    status,
    leaseUntil,
    expiresAt,
  });
  const cases: [string, Parameters<typeof decideIdempotency>[0], string, string][] = [
    ["unknown key", null, "f1", "new"],
    ["expired record", record("complete", null, now), "f1", "new"],
    ["other body", record("complete", null), "f2", "mismatch"],
    ["other body while running", record("in_progress", now + 5), "f2", "mismatch"],
    ["same body, done", record("complete", null), "f1", "replay"],
    ["same body, running within the lease", record("in_progress", now + 1), "f1", "in_progress"],
    ["same body, lease over", record("in_progress", now), "f1", "new"],
  ];
  for (const [name, stored, fingerprint, expected] of cases) {
    assert.equal(decideIdempotency(stored, fingerprint, now), expected, name);
  }
});

Deno.test("fingerprint: key order and whitespace do not matter; method, path and values do", async () => {
  const a = await requestFingerprint("POST", "/v1/x", '{"b":1,"a":{"d":[1,2],"c":"x"}}');
  assert.equal(
    await requestFingerprint("post", "/v1/x", '{ "a": {"c":"x","d":[1,2]}, "b": 1 }'),
    a,
  );
  assert.notEqual(await requestFingerprint("POST", "/v1/y", '{"b":1,"a":{"d":[1,2],"c":"x"}}'), a);
  assert.notEqual(await requestFingerprint("POST", "/v1/x", '{"b":2,"a":{"d":[1,2],"c":"x"}}'), a);
  assert.notEqual(await requestFingerprint("POST", "/v1/x", '{"b":1,"a":{"d":[2,1],"c":"x"}}'), a);
  assert.equal(
    canonicalJson({ z: null, a: [true, { y: 1, x: 2 }] }),
    '{"a":[true,{"x":2,"y":1}],"z":null}',
  );
});

Deno.test("Idempotency-Key: 255 characters are accepted, 256 are not, nor empty or spaced keys", () => {
  assert.equal(idempotencyKeyProblem("k".repeat(255), 255), null);
  assert.equal(
    idempotencyKeyProblem("k".repeat(256), 255),
    "Idempotency-Key is 256 characters; at most 255",
  );
  assert.equal(idempotencyKeyProblem("", 255), "Idempotency-Key must not be empty");
  assert.equal(
    idempotencyKeyProblem("a b", 255),
    "Idempotency-Key must be printable ASCII without spaces",
  );
});

/** A probe resource: POST /v1/probes {value} inserts a row; value "refuse" is a business refusal. */
async function withProbeApp(fn: (f: HttpFixture, rows: () => Promise<string[]>) => Promise<void>) {
  const f = await openHttpFixture({ RATE_LIMIT_RPS: "0" });
  try {
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute("CREATE TABLE probes (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    );
    f.app.post("/v1/probes", async (c: Context<AppEnv>) => {
      const body = await c.req.json().catch(() => null) as { value?: unknown } | null;
      if (typeof body?.value !== "string") {
        return errorResponse(c, {
          status: 400,
          code: "validation_error",
          message: "value must be a string",
          issues: [{ field: "value", location: "body", message: "must be a string" }],
        });
      }
      const value = body.value;
      const principal = c.get("linePrincipal");
      return await respondIdempotently(
        c,
        f.deps,
        {
          database: principal.database,
          companyId: principal.companyId,
          scopeLine: principal.lineId,
        },
        async (tx): Promise<Result<number, "probe_refused">> => {
          const inserted = await tx.execute({
            sql: "INSERT INTO probes (value) VALUES (?) RETURNING id",
            args: [value],
          });
          // The insert above is undone: the refusal is answered and stored, the row is not.
          if (value === "refuse") return tx.abort(refuse("probe_refused", "refused by rule"));
          return ok(Number(inserted.rows[0].id));
        },
        (probe) =>
          probe.ok
            ? { status: 201, body: { id: probe.value, value, at: crypto.randomUUID() } }
            : refusalOutcome(c, { status: 409, code: probe.code, message: probe.message }),
      );
    });
    const rows = async () =>
      (await f.deps.databases.test.readClient.execute("SELECT value FROM probes ORDER BY id")).rows
        .map((r) => String(r.value));
    await fn(f, rows);
  } finally {
    await f.close();
  }
}

const post = (f: HttpFixture, body: string, key?: string, lineKey = f.cast.acmeAutoKeyTest) =>
  f.app.request("/v1/probes", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${lineKey}`,
      "Content-Type": "application/json",
      ...(key === undefined ? {} : { "Idempotency-Key": key }),
    },
    body,
  });

Deno.test("same key + same body → the first response byte for byte with Idempotent-Replayed", async () => {
  await withProbeApp(async (f, rows) => {
    const first = await post(f, '{"value":"a","extra":{"x":1,"y":2}}', "key-1");
    assert.equal(first.status, 201);
    assert.equal(first.headers.get("idempotent-replayed"), null);
    const firstBytes = new Uint8Array(await first.arrayBuffer());
    const replay = await post(f, '{ "extra": {"y":2, "x":1}, "value": "a" }', "key-1");
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal(replay.headers.get("content-type"), first.headers.get("content-type"));
    assert.deepEqual(new Uint8Array(await replay.arrayBuffer()), firstBytes);
    assert.deepEqual(await rows(), ["a"]);
    // Without a key, nothing is deduplicated.
    assert.equal((await post(f, '{"value":"a"}')).status, 201);
    assert.deepEqual(await rows(), ["a", "a"]);
  });
});

Deno.test("same key + other body → 422 idempotency_key_reused; nothing written", async () => {
  await withProbeApp(async (f, rows) => {
    assert.equal((await post(f, '{"value":"a"}', "key-2")).status, 201);
    const reused = await post(f, '{"value":"b"}', "key-2");
    assert.equal(reused.status, 422);
    assert.equal(reused.headers.get("content-type"), "application/problem+json");
    assert.deepEqual(await reused.json(), {
      type: "/docs/errors#idempotency_key_reused",
      title: "Unprocessable Content",
      status: 422,
      detail: 'Idempotency-Key "key-2" was used with a different request in the last 24 hours',
      code: "idempotency_key_reused",
      errors: [{ param: "Idempotency-Key", message: "already used with another request" }],
    });
    assert.deepEqual(await rows(), ["a"]);
  });
});

Deno.test("keys are scoped per line and company: the same key on another line is a new request", async () => {
  await withProbeApp(async (f, rows) => {
    assert.equal((await post(f, '{"value":"a"}', "shared")).status, 201);
    assert.equal((await post(f, '{"value":"a"}', "shared", f.cast.beaconKeyTest)).status, 201);
    assert.deepEqual(await rows(), ["a", "a"]);
  });
});

Deno.test("a business refusal is stored and replayed; a validation refusal is not stored", async () => {
  await withProbeApp(async (f, rows) => {
    const refused = await post(f, '{"value":"refuse"}', "key-3");
    assert.equal(refused.status, 409);
    const refusedBody = await refused.text();
    const again = await post(f, '{"value":"refuse"}', "key-3");
    assert.equal(again.status, 409);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(await again.text(), refusedBody);
    assert.deepEqual(await rows(), [], "the refused unit's insert was undone");

    const invalid = await post(f, '{"value":5}', "key-4");
    assert.equal(invalid.status, 400);
    await invalid.body?.cancel();
    const valid = await post(f, '{"value":"ok"}', "key-4");
    assert.equal(valid.status, 201, "the key was not consumed by the invalid request");
    assert.deepEqual(await rows(), ["ok"]);
  });
});

Deno.test("a key over 255 characters is 400 and stores nothing", async () => {
  await withProbeApp(async (f, rows) => {
    const res = await post(f, '{"value":"a"}', "k".repeat(256));
    assert.equal(res.status, 400);
    assert.deepEqual((await res.json() as { errors: unknown }).errors, [
      { param: "Idempotency-Key", message: "Idempotency-Key is 256 characters; at most 255" },
    ]);
    assert.equal((await post(f, '{"value":"a"}', "k".repeat(255))).status, 201);
    assert.deepEqual(await rows(), ["a"]);
  });
});

Deno.test("a request in flight holds its key: the same request 409, another body 422, then the replay", async () => {
  await withProbeApp(async (f, rows) => {
    // Hold the writer so the first request stays in flight.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => open = resolve);
    const held = f.deps.databases.test.writer.write(() => gate);
    const first = post(f, '{"value":"a"}', "key-5");
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Answered at once, not queued behind the first (which would wait for the gate).
    let timer: ReturnType<typeof setTimeout> | undefined;
    const busy = await Promise.race([
      post(f, '{"value":"a"}', "key-5"),
      new Promise<never>((_, reject) =>
        timer = setTimeout(() => {
          open();
          reject(new Error("the duplicate was not answered while the first ran"));
        }, 2_000)
      ),
    ]).finally(() => clearTimeout(timer));
    assert.equal(busy.status, 409);
    assert.equal(busy.headers.get("retry-after"), "1");
    assert.equal((await busy.json() as { code: string }).code, "idempotency_request_in_progress");
    const other = await post(f, '{"value":"b"}', "key-5");
    assert.equal(other.status, 422);
    assert.equal((await other.json() as { code: string }).code, "idempotency_key_reused");
    // After the lease (60 s) a retry is let through to the writer, where it queues behind the
    // first and finds its stored response.
    f.clock.advance(60_000);
    const retry = post(f, '{"value":"a"}', "key-5");
    open();
    await held;
    const [ran, replayed] = await Promise.all([first, retry]);
    assert.equal(ran.status, 201);
    assert.equal(replayed.status, 201);
    assert.equal(replayed.headers.get("idempotent-replayed"), "true");
    assert.equal(await replayed.text(), await ran.text());
    assert.deepEqual(await rows(), ["a"]);
  });
});

Deno.test("a record left in progress by an earlier version holds its lease, then the key runs", async () => {
  await withProbeApp(async (f, rows) => {
    const fingerprint = await requestFingerprint("POST", "/v1/probes", '{"value":"a"}');
    const now = f.clock.now();
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute({
        sql: `INSERT INTO idempotency_records
                (company_id, scope_line, key, fingerprint, status, lease_until, created_at, expires_at)
              VALUES (?, ?, 'key-6', ?, 'in_progress', ?, ?, ?)`,
        args: [
          f.cast.acme.id,
          f.cast.acme.autoLineId,
          fingerprint,
          now + 60_000,
          now,
          now + 86_400_000,
        ],
      })
    );
    const busy = await post(f, '{"value":"a"}', "key-6");
    assert.equal(busy.status, 409);
    assert.equal((await busy.json() as { code: string }).code, "idempotency_request_in_progress");
    f.clock.advance(60_000);
    const ran = await post(f, '{"value":"a"}', "key-6");
    assert.equal(ran.status, 201);
    assert.equal(ran.headers.get("idempotent-replayed"), null);
    assert.equal(
      (await post(f, '{"value":"a"}', "key-6")).headers.get("idempotent-replayed"),
      "true",
    );
    assert.deepEqual(await rows(), ["a"]);
  });
});

Deno.test("records are kept 24 hours, then the key is new again and the purge removes only expired ones", async () => {
  await withProbeApp(async (f, rows) => {
    assert.equal((await post(f, '{"value":"a"}', "old")).status, 201);
    f.clock.advance(86_400_000 - 1);
    const purgedEarly = await f.deps.databases.test.writer.write((tx) =>
      purgeExpiredIdempotency(tx, f.clock.now(), 100)
    );
    assert.equal(purgedEarly, 0, "never purged before 24 hours");
    assert.equal(
      (await post(f, '{"value":"a"}', "old")).headers.get("idempotent-replayed"),
      "true",
    );
    assert.equal((await post(f, '{"value":"b"}', "young")).status, 201);
    f.clock.advance(1);
    assert.equal(
      await f.deps.databases.test.writer.write((tx) =>
        purgeExpiredIdempotency(tx, f.clock.now(), 100)
      ),
      1,
    );
    assert.equal(
      (await post(f, '{"value":"a"}', "old")).status,
      201,
      "after 24 hours the key runs again",
    );
    assert.deepEqual(await rows(), ["a", "b", "a"]);
  });
});

Deno.test("20 parallel identical requests create one resource; the others get 409 in progress or its replay", async () => {
  await withProbeApp(async (f, rows) => {
    for (let round = 0; round < 10; round++) {
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => post(f, `{"value":"r${round}"}`, `round-${round}`)),
      );
      const bodies = await Promise.all(responses.map((r) => r.text()));
      const created = responses.filter((r) =>
        r.status === 201 && r.headers.get("idempotent-replayed") === null
      );
      assert.equal(created.length, 1, `round ${round}: exactly one request ran`);
      const createdBody = bodies[responses.indexOf(created[0])];
      responses.forEach((r, i) => {
        // The others were either still in progress, or arrived after it finished and got its replay.
        if (r === created[0]) return;
        if (r.status === 201) {
          assert.equal(bodies[i], createdBody, `round ${round}: replay is identical`);
        } else assert.equal(r.status, 409, `round ${round}`);
      });
    }
    assert.deepEqual(await rows(), Array.from({ length: 10 }, (_, i) => `r${i}`));
  });
});
