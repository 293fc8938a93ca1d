import assert from "node:assert/strict";
import { basic, fundAcmeAuto, withHttpFixture } from "./http_fixture.ts";

const MIB = 1024 * 1024;

function chunkedBody(totalBytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const size = Math.min(64 * 1024, totalBytes - sent);
      controller.enqueue(new Uint8Array(size).fill(0x20));
      sent += size;
    },
  });
}

Deno.test("POST /v1/keys/rotate: new key at once, old key valid until 24 h, refused one second after", async () => {
  await withHttpFixture(async (f) => {
    const oldKey = f.cast.acmeAutoKeyTest;
    const rotate = await f.app.request("/v1/keys/rotate", {
      method: "POST",
      headers: { Authorization: `Bearer ${oldKey}` },
    });
    assert.equal(rotate.status, 201);
    const body = await rotate.json() as {
      secret: string;
      object: string;
      line: string;
      livemode: boolean;
      previous_key: { expires_at: string };
    };
    assert.match(body.secret, /^sk_test_[0-9A-Za-z]{43}$/);
    assert.equal(body.object, "api_key");
    assert.equal(body.line, "auto");
    assert.equal(body.livemode, false);
    assert.equal(body.previous_key.expires_at, new Date(f.clock.now() + 86_400_000).toISOString());

    const call = (key: string) =>
      f.app.request("/v1/nothing", { headers: { Authorization: `Bearer ${key}` } });
    assert.equal((await call(body.secret)).status, 404, "the new key works at once");
    f.clock.advance(86_400_000 - 1000);
    assert.equal((await call(oldKey)).status, 404, "24 h minus one second: old key still works");
    f.clock.advance(2000);
    const expired = await call(oldKey);
    assert.equal(expired.status, 401, "24 h plus one second: old key refused");
    assert.equal(
      (await expired.json() as { detail: string }).detail,
      "the line key was rotated and its grace period has ended",
    );
    assert.equal((await call(body.secret)).status, 404, "the new key keeps working");
  });
});

Deno.test("rotating a key that was already rotated is a 409 key_already_rotated", async () => {
  await withHttpFixture(async (f) => {
    const headers = { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` };
    assert.equal((await f.app.request("/v1/keys/rotate", { method: "POST", headers })).status, 201);
    const again = await f.app.request("/v1/keys/rotate", { method: "POST", headers });
    assert.equal(again.status, 409);
    assert.equal((await again.json() as { code: string }).code, "key_already_rotated");
  });
});

Deno.test("a 1 MiB body passes; 1 MiB + 1 byte is 413 in each surface's format, chunked too", async () => {
  await withHttpFixture(async (f) => {
    const v1 = {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    };
    const atLimit = await f.app.request("/v1/keys/rotate", {
      method: "POST",
      headers: v1,
      body: " ".repeat(MIB),
    });
    assert.equal(atLimit.status, 201);

    const tooLarge = await f.app.request("/v1/keys/rotate", {
      method: "POST",
      headers: v1,
      body: " ".repeat(MIB + 1),
    });
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.headers.get("content-type"), "application/problem+json");
    const problem = await tooLarge.json() as Record<string, unknown>;
    assert.equal(problem.code, "payload_too_large");
    assert.equal(problem.detail, `the request body exceeds ${MIB} bytes`);

    const chunked = await f.app.request("/v1/keys/rotate", {
      method: "POST",
      headers: { ...v1, "Transfer-Encoding": "chunked" },
      body: chunkedBody(MIB + 1),
      // @ts-ignore: Deno's Request needs duplex for a streamed body
      duplex: "half",
    });
    assert.equal(
      chunked.status,
      413,
      "a chunked body without Content-Length is counted as it streams",
    );

    const api = await f.app.request("/api/authenticate", {
      method: "POST",
      headers: { Authorization: basic(f.cast.acme.tin, f.cast.alice.keyTest) },
      body: chunkedBody(MIB + 1),
      // @ts-ignore: as above
      duplex: "half",
    });
    assert.equal(api.status, 413);
    assert.deepEqual(await api.json(), {
      name: "PAYLOAD_TOO_LARGE",
      message: `the request body exceeds ${MIB} bytes`,
      details: [{ Issue: `at most ${MIB} bytes`, Field: "body", Location: "body" }],
    });
  });
});

Deno.test("every response carries X-Request-Id; a caller's well-formed id is kept", async () => {
  await withHttpFixture(async (f) => {
    for (const path of ["/healthz", "/nowhere", "/api/x", "/v1/x"]) {
      const res = await f.app.request(path);
      assert.match(res.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/, path);
      await res.body?.cancel();
    }
    const kept = await f.app.request("/healthz", { headers: { "X-Request-Id": "trace-123" } });
    assert.equal(kept.headers.get("x-request-id"), "trace-123");
  });
});

Deno.test("an uncaught error is a 500 in the surface's format with the request id and no stack", async () => {
  await withHttpFixture(async (f) => {
    f.app.get("/v1/boom", () => {
      throw new Error("database password is hunter2");
    });
    const originalError = console.error;
    const errors: string[] = [];
    console.error = (line: string) => errors.push(line);
    try {
      const res = await f.app.request("/v1/boom", {
        headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
      });
      assert.equal(res.status, 500);
      const id = res.headers.get("x-request-id");
      const text = await res.text();
      assert.deepEqual(JSON.parse(text), {
        type: "/docs/errors#internal_error",
        title: "Internal Server Error",
        status: 500,
        detail: `an internal error occurred; quote request id ${id} when reporting it`,
        code: "internal_error",
      });
      assert.ok(!text.includes("hunter2") && !text.includes("at "), "no message or stack leaks");
      assert.equal(errors.length, 1);
      assert.equal(
        JSON.parse(errors[0]).request_id,
        id,
        "the log line carries the request id and the stack",
      );
    } finally {
      console.error = originalError;
    }
  });
});

Deno.test("unknown routes are 404 in each surface's format", async () => {
  await withHttpFixture(async (f) => {
    const login = await f.app.request("/api/authenticate", {
      method: "POST",
      headers: { Authorization: basic(f.cast.acme.tin, f.cast.alice.keyTest) },
    });
    const { access_token } = await login.json() as { access_token: string };
    const api = await f.app.request("/api/nope", {
      headers: { Authorization: `Bearer ${access_token}` },
    });
    assert.equal(api.status, 404);
    assert.deepEqual(await api.json(), {
      name: "RESOURCE_NOT_FOUND",
      message: "no resource at GET /api/nope",
      details: [],
    });
    const other = await f.app.request("/nope");
    assert.equal(other.status, 404);
    assert.deepEqual(await other.json(), {
      error: { code: "not_found", message: "no resource at GET /nope" },
    });
  });
});

Deno.test("access log: one JSON object per request with id, method, path, status and duration", async () => {
  await withHttpFixture(async (f) => {
    const res = await f.app.request("/healthz", { headers: { "X-Request-Id": "log-check" } });
    assert.equal(res.status, 200);
    const entry = f.logs.at(-1)!;
    assert.deepEqual(
      { ...entry, time: typeof entry.time, duration_ms: typeof entry.duration_ms },
      {
        time: "string",
        level: "info",
        msg: "request",
        request_id: "log-check",
        method: "GET",
        path: "/healthz",
        status: 200,
        duration_ms: "number",
      },
    );
  });
});

Deno.test("/healthz and /readyz report the databases and migrations", async () => {
  await withHttpFixture(async (f) => {
    assert.deepEqual(await (await f.app.request("/healthz")).json(), { status: "ok" });
    const ready = await f.app.request("/readyz");
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), {
      status: "ready",
      databases: { test: "ok", live: "ok" },
    });
  });
});

Deno.test("/metrics counts requests by surface and status and reports the writers", async () => {
  await withHttpFixture(async (f) => {
    await (await f.app.request("/v1/x")).body?.cancel();
    await (await f.app.request("/healthz")).body?.cancel();
    const res = await f.app.request("/metrics");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4");
    const text = await res.text();
    assert.match(text, /^http_requests_total\{surface="v1",status="401"\} 1$/m);
    assert.match(text, /^http_requests_total\{surface="other",status="200"\} 1$/m);
    assert.match(text, /^db_write_units_committed\{environment="test"\} \d+$/m);
    assert.match(text, /^process_resident_memory_bytes \d+$/m);
  });
});

Deno.test("an idempotent key rotation replays the new key from a sealed copy; the plaintext is not stored", async () => {
  await withHttpFixture(async (f) => {
    const rotate = () =>
      f.app.request("/v1/keys/rotate", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
          "Idempotency-Key": "rotate-1",
        },
      });
    const first = await rotate();
    assert.equal(first.status, 201);
    const firstText = await first.text();
    const replay = await rotate();
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal(await replay.text(), firstText);
    const secret = (JSON.parse(firstText) as { secret: string }).secret;
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT response_body FROM idempotency_records",
    );
    const stored = new TextDecoder().decode(new Uint8Array(rows[0].response_body as ArrayBuffer));
    assert.match(stored, /^v1\./);
    assert.ok(!stored.includes(secret), "the stored response does not hold the key in clear");
  });
});

Deno.test("an unknown, malformed or revoked CompanyApiKey is 403 NOT_AUTHORIZED, at authenticate and on a request", async () => {
  await withHttpFixture(async (f) => {
    const login = await f.app.request("/api/authenticate", {
      method: "POST",
      headers: { Authorization: basic(f.cast.acme.tin, f.cast.alice.keyTest) },
    });
    const { access_token } = await login.json() as { access_token: string };
    const revoked = f.cast.beacon.companyKey;
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute({
        sql: "UPDATE api_keys SET revoked_at = ? WHERE kind = 'company' AND company_id = ?",
        args: [f.clock.now(), f.cast.beacon.id],
      })
    );
    const message = "CompanyApiKey is not a company key of this environment";
    const refusal = {
      name: "NOT_AUTHORIZED",
      message,
      details: [{ Issue: message, Field: "CompanyApiKey", Location: "header" }],
    };
    const unknown = `cak_${"x".repeat(32)}`;
    for (const companyApiKey of [unknown, "cak_nope", "not-a-key", revoked]) {
      const atAuthenticate = await f.app.request("/api/authenticate", {
        method: "POST",
        headers: {
          Authorization: basic(f.cast.acme.tin, f.cast.morgan.keyTest),
          CompanyApiKey: companyApiKey,
        },
      });
      assert.equal(atAuthenticate.status, 403, companyApiKey);
      assert.deepEqual(await atAuthenticate.json(), refusal, companyApiKey);
      const onRequest = await f.app.request("/api/balance", {
        headers: { Authorization: `Bearer ${access_token}`, CompanyApiKey: companyApiKey },
      });
      assert.equal(onRequest.status, 403, companyApiKey);
      assert.deepEqual(await onRequest.json(), refusal, companyApiKey);
    }
  });
});

/**
 * Sends `head` and `body` on a raw TCP connection and reads one response (head and the
 * Content-Length bytes of its body), giving up after `waitMs`. A declared Content-Length larger
 * than `body` leaves the server waiting for the rest.
 */
async function rawExchange(
  port: number,
  head: string,
  body: string,
  waitMs: number,
): Promise<{ response: string; elapsedMs: number }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const started = performance.now();
  const encoder = new TextEncoder();
  await conn.write(encoder.encode(head + body));
  const deadline = AbortSignal.timeout(waitMs);
  const bytes: number[] = [];
  const buffer = new Uint8Array(4096);
  const read = () =>
    Promise.race([
      conn.read(buffer),
      new Promise<"timeout">((resolve) =>
        deadline.aborted
          ? resolve("timeout")
          : deadline.addEventListener("abort", () => resolve("timeout"))
      ),
    ]);
  const text = () => new TextDecoder().decode(new Uint8Array(bytes));
  let response = "";
  for (;;) {
    const n = await read();
    if (n === "timeout" || n === null) break;
    bytes.push(...buffer.subarray(0, n));
    const all = text();
    const end = all.indexOf("\r\n\r\n");
    const length = /content-length: (\d+)/i.exec(all);
    if (end >= 0 && length && all.length >= end + 4 + Number(length[1])) {
      response = all;
      break;
    }
  }
  const elapsedMs = performance.now() - started;
  conn.close();
  return { response, elapsedMs };
}

Deno.test("a body that stops arriving is 408 after BODY_TIMEOUT_MS in each surface's format, with Connection: close; nothing was held or written", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const v1 = { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` };
    const payee = await f.app.request("/v1/payees", {
      method: "POST",
      headers: { ...v1, "Content-Type": "application/json" },
      body: JSON.stringify({ id: "claimant-408", email: "pat@example.test" }),
    });
    assert.equal(payee.status, 201);
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, f.app.fetch);
    try {
      const body = JSON.stringify({
        amount: 10,
        claim_id: "CLM-408",
        payee: { id: "claimant-408" },
        modalities: ["ach"],
      });
      const head = (length: number) =>
        `POST /v1/disbursements HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: Bearer ${f.cast.acmeAutoKeyTest}\r\nIdempotency-Key: stalled-1\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
      // The whole JSON arrives, but 40 more bytes were announced and never come.
      const stalled = await rawExchange(server.addr.port, head(body.length + 40), body, 5_000);
      assert.match(stalled.response, /^HTTP\/1\.1 408 /, "answered, not left hanging");
      assert.ok(stalled.elapsedMs >= 300, `not before the timeout: ${stalled.elapsedMs} ms`);
      assert.ok(stalled.elapsedMs < 3_000, `soon after it: ${stalled.elapsedMs} ms`);
      assert.match(stalled.response, /\r\ncontent-type: application\/problem\+json\r\n/i);
      assert.match(stalled.response, /\r\nconnection: close\r\n/i);
      const problem = stalled.response.slice(stalled.response.indexOf("\r\n\r\n") + 4);
      const message = "the request body did not arrive within 300 ms";
      assert.deepEqual(JSON.parse(problem), {
        type: "/docs/errors#request_timeout",
        title: "Request Timeout",
        status: 408,
        detail: message,
        code: "request_timeout",
        errors: [{ param: "body", message }],
      });
      const read = f.deps.databases.test.readClient;
      const count = async (table: string) =>
        Number((await read.execute(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
      assert.equal(await count("idempotency_records"), 0, "no idempotency record is left");
      assert.equal(await count("disbursements"), 0, "nothing was written");

      // The key was never taken: the whole request with it is a first request.
      const whole = await rawExchange(server.addr.port, head(body.length), body, 5_000);
      assert.match(whole.response, /^HTTP\/1\.1 201 /);
      assert.equal(await count("disbursements"), 1);

      // Surface A answers in the seed's format, and a chunked body that stops is timed out too.
      const chunked = await rawExchange(
        server.addr.port,
        `POST /api/authenticate HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Authorization: ${basic(f.cast.acme.tin, f.cast.alice.keyTest)}\r\n` +
          `Transfer-Encoding: chunked\r\n\r\n`,
        "5\r\nhello\r\n",
        5_000,
      );
      assert.match(chunked.response, /^HTTP\/1\.1 408 /);
      assert.deepEqual(
        JSON.parse(chunked.response.slice(chunked.response.indexOf("\r\n\r\n") + 4)),
        {
          name: "REQUEST_TIMEOUT",
          message,
          details: [{ Issue: message, Field: "body", Location: "body" }],
        },
      );
    } finally {
      await server.shutdown();
    }
  }, { BODY_TIMEOUT_MS: "300" });
});
