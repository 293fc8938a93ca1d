/**
 * Live notification settings: parsed and checked with the rest of the configuration; outside dev
 * mode the service refuses to start without a transport for each channel LIVE_NOTIFICATIONS names;
 * dev mode starts with one warning.
 */
import assert from "node:assert/strict";
import { freePort } from "../bench/service.ts";
import { ConfigError, loadConfig } from "../lib/platform/config.ts";

const secrets = { JWT_SECRET: "x".repeat(32), ENCRYPTION_KEY: btoa("k".repeat(32)) };
const transports = {
  SMTP_URL: "smtps://notify:pa55@smtp.example.com:465",
  SMTP_FROM: "Payments <payments@example.com>",
  SMS_PROVIDER_URL: "https://sms.example.com/v1/messages",
  SMS_PROVIDER_TOKEN: "sms-token",
};
const service = { requireNotificationTransports: true };

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  assert.fail("the configuration was accepted");
}

Deno.test("the four transport settings are read into the configuration", () => {
  const config = loadConfig({ ...secrets, ...transports }, service);
  assert.deepEqual(config.notifications, {
    channels: ["email", "sms"],
    smtp: { url: transports.SMTP_URL, from: transports.SMTP_FROM },
    sms: { url: transports.SMS_PROVIDER_URL, token: transports.SMS_PROVIDER_TOKEN },
  });
  assert.ok(Object.isFrozen(config.notifications));
});

Deno.test("outside dev mode the service start names every channel without a transport", () => {
  const problems = problemsOf(() => loadConfig(secrets, service));
  assert.deepEqual(problems, [
    "SMTP_URL and SMTP_FROM (e-mail) are required outside dev mode to send live payee " +
    "notifications (or name the channels you send with LIVE_NOTIFICATIONS=email, sms or off; " +
    "the others stay pending)",
    "SMS_PROVIDER_URL and SMS_PROVIDER_TOKEN (SMS) are required outside dev mode to send live " +
    "payee notifications (or name the channels you send with LIVE_NOTIFICATIONS=email, sms or " +
    "off; the others stay pending)",
  ]);
  const smsOnly = problemsOf(() =>
    loadConfig({
      ...secrets,
      SMS_PROVIDER_URL: transports.SMS_PROVIDER_URL,
      SMS_PROVIDER_TOKEN: "t",
    }, service)
  );
  assert.equal(smsOnly.length, 1);
  assert.match(smsOnly[0], /^SMTP_URL and SMTP_FROM \(e-mail\) are required/);
});

Deno.test("LIVE_NOTIFICATIONS=off, dev mode, and tools that send nothing start without a transport", () => {
  const off = loadConfig({ ...secrets, LIVE_NOTIFICATIONS: "off" }, service);
  assert.deepEqual(off.notifications.channels, []);
  assert.equal(off.notifications.smtp, null);
  const dev = loadConfig({}, { dev: true, ...service });
  assert.deepEqual(dev.notifications, { channels: ["email", "sms"], smtp: null, sms: null });
  // The operator CLI and the test fixtures load the configuration without the service's needs.
  assert.equal(loadConfig(secrets).notifications.sms, null);
});

Deno.test("an insurer that sends e-mail only needs only the e-mail transport (and SMS only, SMS)", () => {
  const mailOnly = loadConfig({
    ...secrets,
    SMTP_URL: transports.SMTP_URL,
    SMTP_FROM: transports.SMTP_FROM,
    LIVE_NOTIFICATIONS: "email",
  }, service);
  assert.deepEqual(mailOnly.notifications.channels, ["email"]);
  assert.equal(mailOnly.notifications.sms, null);
  const textOnly = loadConfig({
    ...secrets,
    SMS_PROVIDER_URL: transports.SMS_PROVIDER_URL,
    SMS_PROVIDER_TOKEN: "t",
    LIVE_NOTIFICATIONS: "sms",
  }, service);
  assert.deepEqual(textOnly.notifications.channels, ["sms"]);
  // The channel named must still have its transport.
  const problems = problemsOf(() =>
    loadConfig({ ...secrets, LIVE_NOTIFICATIONS: "email" }, service)
  );
  assert.equal(problems.length, 1);
  assert.match(problems[0], /^SMTP_URL and SMTP_FROM \(e-mail\) are required/);
});

const refusals: [string, Record<string, string>, RegExp][] = [
  [
    "an SMTP URL of another scheme, shown without its password",
    { SMTP_URL: "http://user:hunter2@mail", SMTP_FROM: "a@example.com" },
    /^SMTP_URL=\(24 characters\): must be smtp:\/\/user:password@host:port or smtps:\/\/…$/,
  ],
  [
    "a From that is no address",
    { SMTP_URL: transports.SMTP_URL, SMTP_FROM: "Payments" },
    /^SMTP_FROM="Payments": must be an e-mail address/,
  ],
  [
    "an SMS provider over http to another machine",
    { SMS_PROVIDER_URL: "http://sms.example.com/send", SMS_PROVIDER_TOKEN: "t" },
    /^SMS_PROVIDER_URL="http:\/\/sms.example.com\/send": must be https \(http only to a loopback/,
  ],
  [
    "an SMTP URL without its From",
    { SMTP_URL: transports.SMTP_URL },
    /^SMTP_FROM is required with SMTP_URL$/,
  ],
  [
    "an SMS token without its URL",
    { SMS_PROVIDER_TOKEN: "t" },
    /^SMS_PROVIDER_URL is required with SMS_PROVIDER_TOKEN$/,
  ],
  [
    "an unknown switch",
    { LIVE_NOTIFICATIONS: "maybe" },
    /^LIVE_NOTIFICATIONS="maybe": must be "on", "off", "email" or "sms"$/,
  ],
];

for (const [name, env, message] of refusals) {
  Deno.test(`a bad notification setting stops the start, in dev mode too: ${name}`, () => {
    const problems = problemsOf(() => loadConfig(env, { dev: true, ...service }));
    assert.equal(problems.length, 1, problems.join("\n"));
    assert.match(problems[0], message);
  });
}

Deno.test("loopback http is allowed for a provider relay on this machine", () => {
  const config = loadConfig({
    SMS_PROVIDER_URL: "http://127.0.0.1:9999/sms",
    SMS_PROVIDER_TOKEN: "t",
  }, { dev: true });
  assert.equal(config.notifications.sms?.url, "http://127.0.0.1:9999/sms");
});

// The service process itself, as `deno task start` and `deno task dev` run it.

const mainPath = new URL("../main.ts", import.meta.url).pathname;
/** Settings of the machine running the tests must not leak into the service under test. */
const noTransports = {
  SMTP_URL: "",
  SMTP_FROM: "",
  SMS_PROVIDER_URL: "",
  SMS_PROVIDER_TOKEN: "",
  LIVE_NOTIFICATIONS: "",
};

function spawnService(dataDir: string, port: number, env: Record<string, string>, dev = false) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", mainPath, ...(dev ? ["--dev"] : [])],
    env: {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_FORMAT: "off",
      ...noTransports,
      ...env,
    },
    stdout: "null",
    stderr: "piped",
  }).spawn();
}

/** Starts the service, waits for /readyz, stops it with SIGTERM; returns its stderr. */
async function startAndStop(env: Record<string, string>, dev = false): Promise<string> {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-notify-start-" });
  const port = freePort();
  const child = spawnService(dataDir, port, env, dev);
  const stderr = new Response(child.stderr).text();
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
        .then((res) => res.body?.cancel().then(() => res.ok))
        .catch(() => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`not ready in 60 s: ${await stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0, "SIGTERM stops the service cleanly");
    return await stderr;
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already stopped
    }
    await child.status;
    await Deno.remove(dataDir, { recursive: true });
  }
}

Deno.test("deno task start without a live transport is refused with the missing settings (exit 2)", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-notify-refused-" });
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", mainPath],
      env: { DATA_DIR: dataDir, PORT: String(freePort()), ...secrets, ...noTransports },
      stdout: "null",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 2, stderr);
    assert.match(stderr, /^invalid configuration:\n/);
    assert.match(stderr, /SMTP_URL and SMTP_FROM \(e-mail\) are required outside dev mode/);
    assert.match(stderr, /SMS_PROVIDER_URL and SMS_PROVIDER_TOKEN \(SMS\) are required/);
    assert.match(stderr, /LIVE_NOTIFICATIONS=email, sms or off/);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("deno task start with LIVE_NOTIFICATIONS=off starts and warns once that live messages stay pending", async () => {
  const stderr = await startAndStop({ ...secrets, LIVE_NOTIFICATIONS: "off" });
  const warnings = stderr.split("\n").filter((line) => line.includes("LIVE_NOTIFICATIONS=off"));
  assert.equal(warnings.length, 1, stderr);
  assert.equal(JSON.parse(warnings[0]).level, "warn");
});

Deno.test("deno task start with LIVE_NOTIFICATIONS=email and only SMTP starts; SMS stays pending, said once", async () => {
  const stderr = await startAndStop({
    ...secrets,
    SMTP_URL: transports.SMTP_URL,
    SMTP_FROM: transports.SMTP_FROM,
    LIVE_NOTIFICATIONS: "email",
  });
  const warnings = stderr.split("\n").filter((line) => line.includes("LIVE_NOTIFICATIONS=email"));
  assert.equal(warnings.length, 1, stderr);
  assert.deepEqual(JSON.parse(warnings[0]), {
    level: "warn",
    msg: "LIVE_NOTIFICATIONS=email: live SMS messages stay pending in the outbox, never sent",
  });
  assert.ok(!stderr.includes("no transport"), stderr);
});

Deno.test("deno task dev without a live transport starts with one loud warning", async () => {
  const stderr = await startAndStop({}, true);
  const warnings = stderr.split("\n").filter((line) => line.startsWith("WARNING:"));
  assert.equal(warnings.length, 1, stderr);
  assert.match(warnings[0], /live payee notifications have no transport: set SMTP_URL/);
});
