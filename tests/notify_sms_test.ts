/** SMS through the HTTP provider adapter, against a local provider on 127.0.0.1. */
import assert from "node:assert/strict";
import { NOTIFICATION_RETRY_DELAYS_MS, PermanentSendError } from "../lib/notify/mod.ts";
import { jsonBearerProvider, type SmsProviderAdapter, SmsTransport } from "../lib/notify/sms.ts";
import { openNotifyFixture } from "./notify_fixture.ts";
import { forgetCommits, trackCommits } from "../lib/platform/durability.ts";

interface ProviderRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Headers;
  readonly body: string;
}

const TOKEN = "sms-provider-token-1234";

/** A provider answering the scripted statuses in turn (the last one repeats). */
function startProvider(statuses: number[]) {
  const requests: ProviderRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      requests.push({
        method: request.method,
        path: new URL(request.url).pathname,
        headers: request.headers,
        body: await request.text(),
      });
      const status = statuses[Math.min(requests.length - 1, statuses.length - 1)];
      if (status === 302) {
        return new Response(null, { status, headers: { Location: "http://127.0.0.1:1/" } });
      }
      return new Response(status === 200 ? '{"id":"msg_1"}' : "provider trouble", { status });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1/messages`,
    requests,
    stop: () => server.shutdown(),
  };
}

const message = {
  id: "ntf_test1",
  channel: "sms" as const,
  to: "+15555550100",
  subject: null,
  body:
    "Acme Mutual is paying you $10.00. Choose how to be paid: https://pay.example.test/portal/x",
};

Deno.test("the JSON bearer adapter POSTs {to, body} with the token and the message id", async () => {
  const provider = startProvider([200]);
  try {
    const transport = new SmsTransport(jsonBearerProvider({ url: provider.url, token: TOKEN }), {
      timeoutMs: 5_000,
    });
    await transport.send(message);
    assert.equal(provider.requests.length, 1);
    const [request] = provider.requests;
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/v1/messages");
    assert.equal(request.headers.get("authorization"), `Bearer ${TOKEN}`);
    assert.equal(request.headers.get("content-type"), "application/json");
    assert.equal(request.headers.get("idempotency-key"), "ntf_test1");
    assert.deepEqual(JSON.parse(request.body), { to: message.to, body: message.body });
  } finally {
    await provider.stop();
  }
});

Deno.test("a non-2xx answer is a failure naming the status; a redirect is not followed", async () => {
  for (const status of [500, 401, 429, 302, 400, 404, 422]) {
    const provider = startProvider([status]);
    try {
      const transport = new SmsTransport(jsonBearerProvider({ url: provider.url, token: TOKEN }), {
        timeoutMs: 5_000,
      });
      const error = await transport.send(message).then(() => null, (e) => e);
      assert.match(
        String(error?.message),
        new RegExp(`SMS provider 127\\.0\\.0\\.1:\\d+ answered ${status}`),
      );
      // Only a refusal of the message itself is for good; the service's settings can be fixed.
      assert.equal(
        error instanceof PermanentSendError,
        [400, 404, 422].includes(status),
        `${status}`,
      );
      assert.equal(provider.requests.length, 1, `${status}: sent once, nothing followed`);
    } finally {
      await provider.stop();
    }
  }
});

Deno.test("another provider is one adapter: the transport sends whatever request it builds", async () => {
  const provider = startProvider([200]);
  try {
    const formProvider: SmsProviderAdapter = {
      name: "form-provider",
      request: (m) => ({
        url: provider.url,
        headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Api-Key": TOKEN },
        body: new URLSearchParams({ To: m.to, Body: m.body }).toString(),
      }),
    };
    await new SmsTransport(formProvider, { timeoutMs: 5_000 }).send(message);
    const [request] = provider.requests;
    assert.equal(request.headers.get("x-api-key"), TOKEN);
    assert.equal(new URLSearchParams(request.body).get("To"), message.to);
  } finally {
    await provider.stop();
  }
});

Deno.test("the provider answers 500: the SMS stays pending, is retried later, and is sent once it recovers", async () => {
  const provider = startProvider([500, 200]);
  const f = await openNotifyFixture();
  try {
    const notice = await f.notifyNewPayee("live", { phone: "+15555550123" });
    assert.deepEqual(notice.channels, ["sms"]);
    const [queued] = await f.notifications("live");
    const sender = f.sender({
      transports: {
        sms: new SmsTransport(jsonBearerProvider({ url: provider.url, token: TOKEN }), {
          timeoutMs: 5_000,
        }),
      },
    });

    assert.equal(await sender.sweep(), 1);
    let row = await f.notification("live", String(queued.id));
    assert.equal(row.status, "pending");
    assert.equal(row.attempt_count, 1);
    assert.equal(row.next_attempt_at, f.clock.now() + NOTIFICATION_RETRY_DELAYS_MS[0]);
    assert.match(String(row.last_error), /answered 500: provider trouble/);

    assert.equal(await sender.sweep(), 0, "not before the backoff");
    f.clock.advance(NOTIFICATION_RETRY_DELAYS_MS[0]);
    assert.equal(await sender.sweep(), 1);
    row = await f.notification("live", String(queued.id));
    assert.equal(row.status, "sent");
    assert.equal(row.attempt_count, 2);
    assert.equal(row.last_error, null);

    assert.equal(provider.requests.length, 2);
    for (const request of provider.requests) {
      assert.equal(request.headers.get("authorization"), `Bearer ${TOKEN}`);
      assert.equal(request.headers.get("idempotency-key"), queued.id, "the same key on a retry");
      const body = JSON.parse(request.body);
      assert.equal(body.to, "+15555550123");
      assert.ok(body.body.includes(notice.portalUrl), body.body);
    }
  } finally {
    await provider.stop();
    await f.close();
  }
});

Deno.test("the provider refuses the number (400): the SMS is failed at once, never sent again", async () => {
  const provider = startProvider([400, 200]);
  const f = await openNotifyFixture();
  try {
    await f.notifyNewPayee("live", { phone: "+15555550199" });
    const [queued] = await f.notifications("live");
    const logged: Record<string, unknown>[] = [];
    const sender = f.sender({
      transports: {
        sms: new SmsTransport(jsonBearerProvider({ url: provider.url, token: TOKEN }), {
          timeoutMs: 5_000,
        }),
      },
      log: (entry) => logged.push(entry),
    });
    assert.equal(await sender.sweep(), 1);
    const row = await f.notification("live", String(queued.id));
    assert.equal(row.status, "failed");
    assert.equal(row.attempt_count, 1);
    assert.equal(row.next_attempt_at, null);
    assert.match(String(row.last_error), /^PermanentSendError: SMS provider .* answered 400/);
    assert.deepEqual(logged.map((entry) => [entry.level, entry.msg]), [
      ["error", "notification failed: the provider refused it for good"],
    ]);
    f.clock.advance(NOTIFICATION_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0));
    assert.equal(await sender.sweep(), 0);
    assert.equal(provider.requests.length, 1);
  } finally {
    await provider.stop();
    await f.close();
  }
});

Deno.test("an SMS is not sent while a commit it may have been read from is still syncing", async () => {
  const provider = startProvider([200]);
  let synced!: () => void;
  const commits = {
    durableNow: false,
    durable: () => new Promise<void>((resolve) => synced = resolve),
  };
  trackCommits(commits);
  try {
    const transport = new SmsTransport(jsonBearerProvider({ url: provider.url, token: TOKEN }), {
      timeoutMs: 5_000,
    });
    const sent = transport.send(message);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(provider.requests.length, 0);
    commits.durableNow = true;
    synced();
    await sent;
    assert.equal(provider.requests.length, 1);
  } finally {
    forgetCommits(commits);
    await provider.stop();
  }
});
