/** The notification outbox sender on temporary databases and a fake clock. */
import assert from "node:assert/strict";
import {
  nextNotificationAttemptAt,
  NOTIFICATION_ATTEMPTS_MAX,
  NOTIFICATION_RETRY_DELAYS_MS,
  type NotificationMessage,
  type NotificationTransport,
} from "../lib/notify/mod.ts";
import { openNotifyFixture } from "./notify_fixture.ts";

/** A provider double: records what it was given and fails while `failing` is set. */
function recordingTransport(options: { failing?: boolean; delayMs?: number } = {}) {
  const sent: NotificationMessage[] = [];
  const transport: NotificationTransport & { sent: NotificationMessage[]; failing: boolean } = {
    sent,
    failing: options.failing ?? false,
    async send(message) {
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      if (transport.failing) throw new Error("provider unavailable");
      sent.push(message);
    },
  };
  return transport;
}

Deno.test("the retry schedule: 1 min, 5 min, 30 min, 2 h, 6 h, then failed", () => {
  const now = 1_000_000;
  const table: [number, number | null][] = [
    [1, now + 60_000],
    [2, now + 300_000],
    [3, now + 1_800_000],
    [4, now + 7_200_000],
    [5, now + 21_600_000],
    [6, null],
  ];
  for (const [attemptsMade, expected] of table) {
    assert.equal(nextNotificationAttemptAt(attemptsMade, now), expected, `after ${attemptsMade}`);
  }
  assert.equal(NOTIFICATION_ATTEMPTS_MAX, 6);
});

Deno.test("pending live notifications are sent oldest first and marked sent", async () => {
  const f = await openNotifyFixture();
  try {
    const now = f.clock.now();
    const second = await f.insertPending("live", {
      channel: "email",
      recipient: "second@example.test",
      createdAt: now - 1000,
    });
    const first = await f.insertPending("live", {
      channel: "email",
      recipient: "first@example.test",
      createdAt: now - 2000,
    });
    const third = await f.insertPending("live", { channel: "sms", recipient: "+15555550100" });
    const email = recordingTransport();
    const sms = recordingTransport();
    const sender = f.sender({ transports: { email, sms }, concurrency: 1 });

    assert.equal(await sender.sweep(), 3);
    assert.deepEqual(email.sent.map((m) => m.to), ["first@example.test", "second@example.test"]);
    assert.deepEqual(sms.sent.map((m) => [m.id, m.to, m.subject]), [[third, "+15555550100", null]]);
    for (const id of [first, second, third]) {
      const row = await f.notification("live", id);
      assert.equal(row.status, "sent");
      assert.equal(row.sent_at, now);
      assert.equal(row.attempt_count, 1);
      assert.equal(row.next_attempt_at, null);
      assert.equal(row.last_error, null);
    }
    assert.equal(await sender.sweep(), 0, "a sent message is not sent again");
  } finally {
    await f.close();
  }
});

Deno.test("a transport error leaves the message pending with attempt_count 1 and a later due time", async () => {
  const f = await openNotifyFixture();
  try {
    const id = await f.insertPending("live", { channel: "email", recipient: "a@example.test" });
    const email = recordingTransport({ failing: true });
    const logged: Record<string, unknown>[] = [];
    const sender = f.sender({ transports: { email }, log: (entry) => logged.push(entry) });
    const failedAt = f.clock.now();

    assert.equal(await sender.sweep(), 1);
    let row = await f.notification("live", id);
    assert.equal(row.status, "pending");
    assert.equal(row.attempt_count, 1);
    assert.equal(row.next_attempt_at, failedAt + NOTIFICATION_RETRY_DELAYS_MS[0]);
    assert.equal(row.last_error, "Error: provider unavailable");
    assert.equal(row.sent_at, null);
    assert.deepEqual(logged, [{
      level: "warn",
      msg: "notification not sent, will retry",
      notification_id: id,
      channel: "email",
      attempt: 1,
      error: "Error: provider unavailable",
    }]);

    f.clock.advance(NOTIFICATION_RETRY_DELAYS_MS[0] - 1);
    assert.equal(await sender.sweep(), 0, "not retried before its due time");

    f.clock.advance(1);
    email.failing = false;
    assert.equal(await sender.sweep(), 1);
    row = await f.notification("live", id);
    assert.equal(row.status, "sent");
    assert.equal(row.attempt_count, 2);
    assert.equal(row.last_error, null);
    assert.equal(email.sent.length, 1);
  } finally {
    await f.close();
  }
});

Deno.test("after the last attempt the message is marked failed and left alone", async () => {
  const f = await openNotifyFixture();
  try {
    const id = await f.insertPending("live", { channel: "sms", recipient: "+15555550100" });
    const logged: Record<string, unknown>[] = [];
    const sender = f.sender({
      transports: { sms: recordingTransport({ failing: true }) },
      log: (entry) => logged.push(entry),
    });
    for (let attempt = 1; attempt <= NOTIFICATION_ATTEMPTS_MAX; attempt++) {
      assert.equal(await sender.sweep(), 1, `attempt ${attempt}`);
      const row = await f.notification("live", id);
      assert.equal(row.attempt_count, attempt);
      if (attempt < NOTIFICATION_ATTEMPTS_MAX) {
        assert.equal(row.status, "pending");
        f.clock.advance(NOTIFICATION_RETRY_DELAYS_MS[attempt - 1]);
      }
    }
    const row = await f.notification("live", id);
    assert.equal(row.status, "failed");
    assert.equal(row.next_attempt_at, null);
    assert.equal(row.last_error, "Error: provider unavailable");
    assert.equal(logged.at(-1)?.level, "error");
    assert.equal(logged.at(-1)?.msg, "notification failed: no attempts left");
    f.clock.advance(30 * 86_400_000);
    assert.equal(await sender.sweep(), 0);
  } finally {
    await f.close();
  }
});

Deno.test("test-environment notifications are never touched by the sender", async () => {
  const f = await openNotifyFixture();
  try {
    await f.notifyNewPayee("test", { email: "success+ach@example.test", phone: "+15555550100" });
    // Not something the service writes, but even a pending test row must never leave the machine.
    await f.insertPending("test", { channel: "email", recipient: "noaction@example.test" });
    const before = await f.notifications("test");
    assert.deepEqual(before.map((row) => row.status), ["sent", "sent", "pending"]);
    const email = recordingTransport();
    const sms = recordingTransport();
    const sender = f.sender({ transports: { email, sms } });

    assert.equal(await sender.sweep(), 0);
    assert.deepEqual(email.sent, []);
    assert.deepEqual(sms.sent, []);
    assert.deepEqual(await f.notifications("test"), before);
  } finally {
    await f.close();
  }
});

Deno.test("a channel without a transport stays pending and untouched", async () => {
  const f = await openNotifyFixture();
  try {
    const sms = await f.insertPending("live", { channel: "sms", recipient: "+15555550100" });
    const email = await f.insertPending("live", { channel: "email", recipient: "a@example.test" });
    const sender = f.sender({ transports: { email: recordingTransport() } });

    assert.equal(await sender.sweep(), 1);
    assert.equal((await f.notification("live", email)).status, "sent");
    const untouched = await f.notification("live", sms);
    assert.equal(untouched.status, "pending");
    assert.equal(untouched.attempt_count, 0);
    assert.equal(untouched.next_attempt_at, null);
  } finally {
    await f.close();
  }
});

Deno.test("a batch larger than batchSize is sent in several claims within one sweep", async () => {
  const f = await openNotifyFixture();
  try {
    for (let i = 0; i < 25; i++) {
      await f.insertPending("live", { channel: "email", recipient: `p${i}@example.test` });
    }
    const email = recordingTransport();
    const sender = f.sender({ transports: { email }, batchSize: 10, concurrency: 3 });
    assert.equal(await sender.sweep(), 25);
    assert.equal(new Set(email.sent.map((m) => m.id)).size, 25);
    assert.ok((await f.notifications("live")).every((row) => row.status === "sent"));
  } finally {
    await f.close();
  }
});

Deno.test("a crash after the provider accepted a message: sent again once the lease has passed", async () => {
  const f = await openNotifyFixture();
  try {
    const id = await f.insertPending("live", { channel: "email", recipient: "a@example.test" });
    const accepted: string[] = [];
    // The provider accepts, then the process "dies": the database goes away before the record.
    const crashing = f.sender({
      transports: {
        email: {
          async send(message) {
            accepted.push(message.id);
            await f.databases.live.close();
          },
        },
      },
      leaseMs: 60_000,
    });
    await assert.rejects(crashing.sweep(), /writer is closed/);

    // A new process on the same file: the claim survived, the outcome did not.
    await f.reopen("live");
    const email = recordingTransport();
    const restarted = f.sender({ transports: { email }, leaseMs: 60_000 });
    assert.equal((await f.notification("live", id)).status, "pending");
    assert.equal(await restarted.sweep(), 0, "the claim's lease keeps it away for a while");
    f.clock.advance(60_000);
    assert.equal(await restarted.sweep(), 1);
    assert.deepEqual([...accepted, ...email.sent.map((m) => m.id)], [id, id], "at least once");
    assert.equal((await f.notification("live", id)).status, "sent");
  } finally {
    await f.close();
  }
});

Deno.test("stop waits for the sends in flight and their records, and no sweep follows", async () => {
  const f = await openNotifyFixture();
  try {
    const id = await f.insertPending("live", { channel: "email", recipient: "a@example.test" });
    const email = recordingTransport({ delayMs: 200 });
    const sender = f.sender({ transports: { email } });
    sender.start(10);
    const deadline = Date.now() + 5000;
    while ((await f.notification("live", id)).next_attempt_at === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await sender.stop();
    assert.equal(
      (await f.notification("live", id)).status,
      "sent",
      "recorded before stop returned",
    );
    await f.insertPending("live", { channel: "email", recipient: "b@example.test" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(email.sent.length, 1, "nothing is sent after stop");
  } finally {
    await f.close();
  }
});
