import assert from "node:assert/strict";
import { openHttpFixture } from "./http_fixture.ts";

Deno.test("sandbox inbox: empty at first, then lists test-environment messages newest first", async () => {
  const f = await openHttpFixture({ SANDBOX_INBOX: "1" });
  try {
    const empty = await f.app.request("/sandbox/inbox.json");
    assert.equal(empty.status, 200);
    assert.deepEqual(await empty.json(), { object: "list", data: [] });
    const emptyPage = await f.app.request("/sandbox/inbox");
    assert.equal(emptyPage.status, 200);
    assert.match(await emptyPage.text(), /No messages yet\./);

    const insert = (id: string, channel: string, at: number, code: string | null) =>
      f.deps.databases.test.writer.write((tx) =>
        tx.execute({
          sql:
            `INSERT INTO notifications (id, channel, recipient, subject, body, links, code, status, created_at, sent_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, 'sent', ?, ?)`,
          args: [
            id,
            channel,
            channel === "email" ? "pat@example.test" : "+15555550100",
            channel === "email" ? "Your payment <is> ready" : null,
            "Open the link",
            JSON.stringify(["http://127.0.0.1:8000/p/abc"]),
            code,
            at,
            at,
          ],
        })
      );
    await insert("ntf_1", "email", Date.UTC(2026, 0, 1), null);
    await insert("ntf_2", "sms", Date.UTC(2026, 0, 2), "123456");
    const listed = await (await f.app.request("/sandbox/inbox.json")).json() as { data: unknown[] };
    assert.deepEqual(listed.data, [
      {
        id: "ntf_2",
        channel: "sms",
        to: "+15555550100",
        subject: null,
        body: "Open the link",
        links: ["http://127.0.0.1:8000/p/abc"],
        code: "123456",
        sent_at: "2026-01-02T00:00:00.000Z",
      },
      {
        id: "ntf_1",
        channel: "email",
        to: "pat@example.test",
        subject: "Your payment <is> ready",
        body: "Open the link",
        links: ["http://127.0.0.1:8000/p/abc"],
        sent_at: "2026-01-01T00:00:00.000Z",
      },
    ]);
    const page = await (await f.app.request("/sandbox/inbox")).text();
    assert.match(page, /Your payment &lt;is&gt; ready/, "message text is escaped");
    assert.match(page, /<a href="http:\/\/127.0.0.1:8000\/p\/abc">/);
    assert.match(page, /123456/);
  } finally {
    await f.close();
  }
});

Deno.test("sandbox inbox is off outside dev mode unless SANDBOX_INBOX=1", async () => {
  const f = await openHttpFixture();
  try {
    const res = await f.app.request("/sandbox/inbox.json");
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), {
      error: { code: "not_found", message: "the sandbox inbox is off" },
    });
  } finally {
    await f.close();
  }
});
