/**
 * The running service sends its live outbox: `main.ts` (not dev mode) started on a DATA_DIR whose
 * live database holds a pending e-mail and a pending SMS delivers both to local receivers, then
 * stops cleanly on SIGTERM with both recorded as sent.
 */
import assert from "node:assert/strict";
import { SMTPServer } from "smtp-server";
import { freePort } from "../bench/service.ts";
import { openTempDatabase } from "./helpers.ts";

const mainPath = new URL("../main.ts", import.meta.url).pathname;

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("main.ts sends pending live notifications through SMTP and the SMS provider, and stops cleanly", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-notify-service-" });
  const mails: { rcptTo: string[]; raw: string }[] = [];
  const smtpServer = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      let raw = "";
      stream.on("data", (chunk: Uint8Array) => raw += new TextDecoder().decode(chunk));
      stream.on("end", () => {
        mails.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtpServer.listen(0, "127.0.0.1", resolve));
  const smtpPort = (smtpServer.server.address() as { port: number }).port;
  const texts: { authorization: string | null; body: { to: string; body: string } }[] = [];
  const smsProvider = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      texts.push({
        authorization: request.headers.get("authorization"),
        body: await request.json(),
      });
      return new Response('{"id":"msg_1"}', { status: 202 });
    },
  );

  // Queued before the start: the live database as a previous run left it.
  const live = await openTempDatabase(dataDir, "live");
  const now = Date.now();
  await live.writer.write(async (tx) => {
    for (
      const [id, channel, recipient] of [
        ["ntf_mail1", "email", "dana@example.test"],
        ["ntf_text1", "sms", "+15555550100"],
      ]
    ) {
      await tx.execute({
        sql: `INSERT INTO notifications (id, channel, recipient, subject, body, status, created_at)
                VALUES (?, ?, ?, ?, ?, 'pending', ?)`,
        args: [
          id,
          channel,
          recipient,
          channel === "email" ? "Acme Mutual has a payment for you" : null,
          "Choose how to be paid: https://pay.example.test/portal/abc",
          now,
        ],
      });
    }
  });
  await live.close();

  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", mainPath],
    env: {
      DATA_DIR: dataDir,
      PORT: String(freePort()),
      HOST: "127.0.0.1",
      LOG_FORMAT: "off",
      JWT_SECRET: "j".repeat(40),
      ENCRYPTION_KEY: btoa("e".repeat(32)),
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      SMTP_FROM: "Acme Payments <payments@acme.example.test>",
      SMS_PROVIDER_URL: `http://127.0.0.1:${smsProvider.addr.port}/messages`,
      SMS_PROVIDER_TOKEN: "provider-token",
      LIVE_NOTIFICATIONS: "",
    },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    await waitFor(() => mails.length > 0 && texts.length > 0, 60_000, "both notifications");
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0, await stderr);

    assert.deepEqual(mails.map((m) => m.rcptTo), [["dana@example.test"]]);
    assert.match(mails[0].raw, /^Subject: Acme Mutual has a payment for you\r$/m);
    assert.match(mails[0].raw, /https:\/\/pay\.example\.test\/portal\/abc/);
    assert.deepEqual(texts, [{
      authorization: "Bearer provider-token",
      body: {
        to: "+15555550100",
        body: "Choose how to be paid: https://pay.example.test/portal/abc",
      },
    }]);

    const reopened = await openTempDatabase(dataDir, "live");
    const { rows } = await reopened.readClient.execute(
      "SELECT id, status, attempt_count FROM notifications ORDER BY id",
    );
    await reopened.close();
    assert.deepEqual(rows.map((row) => [row.id, row.status, row.attempt_count]), [
      ["ntf_mail1", "sent", 1],
      ["ntf_text1", "sent", 1],
    ]);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already stopped
    }
    await child.status;
    await stderr;
    await smsProvider.shutdown();
    await new Promise<void>((resolve) => smtpServer.close(() => resolve()));
    await Deno.remove(dataDir, { recursive: true });
  }
});
