/**
 * E-mail end to end: a live payee notice goes from the outbox through nodemailer to a local SMTP
 * receiver (smtp-server on 127.0.0.1, authentication required, no STARTTLS).
 */
import assert from "node:assert/strict";
import { SMTPServer } from "smtp-server";
import { SmtpTransport } from "../lib/notify/smtp.ts";
import { openNotifyFixture } from "./notify_fixture.ts";

interface ReceivedMail {
  readonly mailFrom: string;
  readonly rcptTo: string[];
  readonly user: string | undefined;
  readonly raw: string;
}

const USER = "notify";
const PASSWORD = "s3cret-pass";

/** A receiver that requires USER/PASSWORD and refuses recipients at `refused.example.test`. */
async function startReceiver() {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASSWORD) {
        return callback(null, { user: auth.username });
      }
      callback(new Error("authentication failed"));
    },
    onRcptTo(address, _session, callback) {
      if (address.address.endsWith("@refused.example.test")) {
        return callback(new Error("no such mailbox"));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
      stream.on("end", () => {
        const envelope = session.envelope;
        received.push({
          mailFrom: envelope.mailFrom ? envelope.mailFrom.address : "",
          rcptTo: envelope.rcptTo.map((rcpt) => rcpt.address),
          user: session.user as string | undefined,
          raw: new TextDecoder().decode(
            new Uint8Array(chunks.flatMap((chunk) => [...chunk])),
          ),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The headers (unfolded) and the decoded text body of a single-part message. */
function parseMail(raw: string): { headers: Map<string, string>; body: string } {
  const split = raw.indexOf("\r\n\r\n");
  const headers = new Map<string, string>();
  for (const line of raw.slice(0, split).replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  let body = raw.slice(split + 4);
  if (headers.get("content-transfer-encoding") === "quoted-printable") {
    const bytes = body.replace(/=\r\n/g, "").replace(
      /=([0-9A-F]{2})/g,
      (_, hex) => String.fromCharCode(parseInt(hex, 16)),
    );
    body = new TextDecoder().decode(Uint8Array.from(bytes, (c) => c.charCodeAt(0)));
  } else if (headers.get("content-transfer-encoding") === "base64") {
    body = new TextDecoder().decode(
      Uint8Array.from(atob(body.replace(/\s+/g, "")), (c) => c.charCodeAt(0)),
    );
  }
  return { headers, body };
}

Deno.test("a live payee e-mail reaches the SMTP receiver: recipient, subject, portal link; row sent", async () => {
  const receiver = await startReceiver();
  const f = await openNotifyFixture();
  const smtp = new SmtpTransport({
    url: `smtp://${USER}:${PASSWORD}@127.0.0.1:${receiver.port}`,
    from: "Acme Payments <payments@acme.example.test>",
    timeoutMs: 5_000,
    connectionsMax: 2,
  });
  try {
    const notice = await f.notifyNewPayee("live", {
      email: "dana.claimant@example.test",
      firstName: "Dana",
    });
    assert.deepEqual(notice.channels, ["email"]);
    const [queued] = await f.notifications("live");
    assert.equal(queued.status, "pending", "live messages wait in the outbox");

    const sender = f.sender({ transports: { email: smtp } });
    assert.equal(await sender.sweep(), 1);

    assert.equal(receiver.received.length, 1);
    const [mail] = receiver.received;
    assert.deepEqual(mail.rcptTo, ["dana.claimant@example.test"]);
    assert.equal(mail.mailFrom, "payments@acme.example.test");
    assert.equal(mail.user, USER);
    const { headers, body } = parseMail(mail.raw);
    assert.equal(headers.get("to"), "dana.claimant@example.test");
    assert.equal(headers.get("from"), "Acme Payments <payments@acme.example.test>");
    assert.equal(typeof queued.subject, "string");
    assert.equal(headers.get("subject"), queued.subject);
    assert.match(String(queued.subject), /Acme Mutual/);
    assert.equal(headers.get("message-id"), `<${queued.id}@acme.example.test>`);
    assert.ok(body.includes(notice.portalUrl), `the body carries ${notice.portalUrl}:\n${body}`);

    const row = await f.notification("live", String(queued.id));
    assert.equal(row.status, "sent");
    assert.equal(row.attempt_count, 1);
    assert.equal(row.sent_at, f.clock.now());
  } finally {
    smtp.close();
    await receiver.close();
    await f.close();
  }
});

Deno.test("an SMTP refusal: a wrong password is retried, a refused mailbox is failed at once", async () => {
  const receiver = await startReceiver();
  const f = await openNotifyFixture();
  const wrongPassword = new SmtpTransport({
    url: `smtp://${USER}:wrong@127.0.0.1:${receiver.port}`,
    from: "payments@acme.example.test",
    timeoutMs: 5_000,
    connectionsMax: 1,
  });
  const refusedRecipient = new SmtpTransport({
    url: `smtp://${USER}:${PASSWORD}@127.0.0.1:${receiver.port}`,
    from: "payments@acme.example.test",
    timeoutMs: 5_000,
    connectionsMax: 1,
  });
  try {
    const cases = [
      { transport: wrongPassword, to: "dana@example.test", error: /535/, status: "pending" },
      {
        transport: refusedRecipient,
        to: "nobody@refused.example.test",
        error: /^PermanentSendError: .*no such mailbox/,
        status: "failed",
      },
    ];
    for (const { transport, to, error, status } of cases) {
      const id = await f.insertPending("live", { channel: "email", recipient: to });
      assert.equal(await f.sender({ transports: { email: transport } }).sweep(), 1);
      const row = await f.notification("live", id);
      assert.equal(row.status, status, to);
      assert.equal(row.attempt_count, 1);
      if (status === "pending") assert.ok(Number(row.next_attempt_at) > f.clock.now());
      else assert.equal(row.next_attempt_at, null);
      assert.match(String(row.last_error), error);
    }
    assert.equal(receiver.received.length, 0);
  } finally {
    wrongPassword.close();
    refusedRecipient.close();
    await receiver.close();
    await f.close();
  }
});
