import assert from "node:assert/strict";
import { configDefaults, ConfigError, loadConfig } from "../lib/platform/config.ts";

const secrets = { JWT_SECRET: "x".repeat(32), ENCRYPTION_KEY: btoa("k".repeat(32)) };

Deno.test("defaults apply when the environment is empty (dev mode needs no secrets)", () => {
  const config = loadConfig({}, { dev: true });
  assert.equal(config.port, 8000);
  assert.equal(config.dataDir, "./data");
  assert.equal(config.baseUrl, "http://127.0.0.1:8000");
  assert.deepEqual(config.databaseUrls, {
    test: "file:./data/test.db",
    live: "file:./data/live.db",
  });
  assert.equal(config.limits.BODY_LIMIT_BYTES, 1024 * 1024);
  assert.equal(
    config.limits.PAYEES_PER_DISBURSEMENT_MAX,
    configDefaults.PAYEES_PER_DISBURSEMENT_MAX,
  );
  assert.equal(config.limits.FUNDING_AMOUNT_MAX_CENTS, 9_999_999_999, "$99,999,999.99");
  assert.equal(
    config.limits.AMOUNT_MAX_CENTS,
    100_000_000,
    "the per-payee cap stays $1,000,000.00",
  );
  assert.equal(config.sandboxInbox, true);
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.limits));
});

Deno.test("every limit of contract §11 is configurable", () => {
  const config = loadConfig({
    ...secrets,
    RATE_LIMIT_RPS: "0",
    AMOUNT_MAX_CENTS: "500",
    PORT: "9001",
  });
  assert.equal(config.limits.RATE_LIMIT_RPS, 0);
  assert.equal(config.limits.AMOUNT_MAX_CENTS, 500);
  assert.equal(config.port, 9001);
  assert.equal(config.baseUrl, "http://127.0.0.1:9001");
  assert.equal(config.sandboxInbox, false);
});

const refusals: [string, Record<string, string>, RegExp][] = [
  ["non-numeric port", { PORT: "abc" }, /PORT="abc": must be a whole number/],
  ["port past the range", { PORT: "65536" }, /PORT="65536": must be at most 65535/],
  [
    "fractional limit",
    { BODY_LIMIT_BYTES: "1.5" },
    /BODY_LIMIT_BYTES="1.5": must be a whole number/,
  ],
  ["negative rate limit", { RATE_LIMIT_RPS: "-1" }, /RATE_LIMIT_RPS="-1": must be at least 0/],
  [
    "bad database url",
    { DATABASE_URL_LIVE: "postgres://x" },
    /DATABASE_URL_LIVE="postgres:\/\/x": must start with/,
  ],
  [
    "short jwt secret",
    { JWT_SECRET: "short" },
    /JWT_SECRET=\(5 characters\): must be at least 32 bytes/,
  ],
  ["bad base url", { BASE_URL: "not a url" }, /BASE_URL="not a url": must be an absolute URL/],
  ["bad log format", { LOG_FORMAT: "xml" }, /LOG_FORMAT="xml": must be "json" or "off"/],
  [
    "funding cap past a NACHA entry's 10 digits",
    { FUNDING_AMOUNT_MAX_CENTS: "10000000000" },
    /FUNDING_AMOUNT_MAX_CENTS="10000000000": must be at most 9999999999/,
  ],
  [
    "funding cap below the smallest amount",
    { AMOUNT_MIN_CENTS: "500", FUNDING_AMOUNT_MAX_CENTS: "499" },
    /FUNDING_AMOUNT_MAX_CENTS=499: must not be below AMOUNT_MIN_CENTS=500/,
  ],
  [
    "min above max",
    { AMOUNT_MIN_CENTS: "10", AMOUNT_MAX_CENTS: "5" },
    /AMOUNT_MIN_CENTS=10: must not exceed/,
  ],
];

for (const [name, env, message] of refusals) {
  Deno.test(`a bad value stops the start: ${name}`, () => {
    assert.throws(() => loadConfig({ ...secrets, ...env }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, message);
      return true;
    });
  });
}

Deno.test("outside dev mode the secrets are required and the message names them", () => {
  assert.throws(() => loadConfig({}), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.equal(error.problems.length, 2);
    assert.match(error.problems[0], /^JWT_SECRET is required/);
    assert.match(error.problems[1], /^ENCRYPTION_KEY is required/);
    return true;
  });
});

/** Each rule at its edge: the last value kept, and the first one past it with the exact problem. */
const edges: [string, Record<string, string>, string | null][] = [
  ["port at its top", { PORT: "65535" }, null],
  ["port at zero", { PORT: "0" }, 'PORT="0": must be at least 1'],
  [
    "digits past a safe integer",
    { PORT: "9".repeat(400) },
    `PORT="${"9".repeat(400)}": must be a whole number`,
  ],
  [
    "a number in exponent form",
    { BODY_TIMEOUT_MS: "1e3" },
    'BODY_TIMEOUT_MS="1e3": must be a whole number',
  ],
  ["a limit at its floor", { BODY_TIMEOUT_MS: "100" }, null],
  [
    "a limit below its floor",
    { BODY_TIMEOUT_MS: "99" },
    'BODY_TIMEOUT_MS="99": must be at least 100',
  ],
  ["a jwt secret of 32 bytes", { JWT_SECRET: "x".repeat(32) }, null],
  ["a jwt secret of 16 two-byte characters", { JWT_SECRET: "é".repeat(16) }, null],
  [
    "a jwt secret of 31 bytes",
    { JWT_SECRET: "é".repeat(15) + "x" },
    "JWT_SECRET=(16 characters): must be at least 32 bytes",
  ],
  ["a metrics token of 32 characters", { METRICS_TOKEN: "m".repeat(32) }, null],
  [
    "a metrics token of 31 characters",
    { METRICS_TOKEN: "m".repeat(31) },
    "METRICS_TOKEN=(31 characters): must be at least 32 characters",
  ],
  [
    "an encryption key without its padding",
    { ENCRYPTION_KEY: btoa("k".repeat(32)).slice(0, 43) },
    "ENCRYPTION_KEY=(43 characters): must be 32 bytes in base64 (44 characters)",
  ],
  [
    "a base url of another scheme",
    { BASE_URL: "ftp://pay.example.com" },
    'BASE_URL="ftp://pay.example.com": must be http(s)',
  ],
  ["a base url with a trailing slash", { BASE_URL: "https://pay.example.com/" }, null],
  ["a libSQL server url", { DATABASE_URL_LIVE: "libsql://db.example.com" }, null],
  [
    "a picklist value in other case",
    { LIVE_NOTIFICATIONS: "OFF" },
    'LIVE_NOTIFICATIONS="OFF": must be "on", "off", "email" or "sms"',
  ],
  ["an sms relay on loopback over http", {
    SMS_PROVIDER_URL: "http://127.0.0.1:9000/send",
    SMS_PROVIDER_TOKEN: "t",
  }, null],
  [
    "an sms provider over http elsewhere",
    { SMS_PROVIDER_URL: "http://sms.example.com/send", SMS_PROVIDER_TOKEN: "t" },
    'SMS_PROVIDER_URL="http://sms.example.com/send": must be https (http only to a loopback address)',
  ],
  ["an sms provider that is no url", {
    SMS_PROVIDER_URL: "sms.example.com",
    SMS_PROVIDER_TOKEN: "t",
  }, 'SMS_PROVIDER_URL="sms.example.com": must be an absolute URL'],
  ["a sender with a display name", {
    SMTP_URL: "smtp://u:p@mail.example.com:587",
    SMTP_FROM: "Payments <p@example.com>",
  }, null],
  [
    "a sender that is no address",
    { SMTP_URL: "smtp://u:p@mail.example.com:587", SMTP_FROM: "payments" },
    'SMTP_FROM="payments": must be an e-mail address, optionally with a name: Payments <payments@example.com>',
  ],
  ["an S3 target with a query", {
    BACKUP_S3_URL: "https://s3.example.com/bucket?x=1",
    BACKUP_S3_ACCESS_KEY_ID: "a",
    BACKUP_S3_SECRET_ACCESS_KEY: "s",
  }, 'BACKUP_S3_URL="https://s3.example.com/bucket?x=1": must have no query or fragment'],
  [
    "an S3 target without a bucket",
    {
      BACKUP_S3_URL: "https://s3.example.com/",
      BACKUP_S3_ACCESS_KEY_ID: "a",
      BACKUP_S3_SECRET_ACCESS_KEY: "s",
    },
    'BACKUP_S3_URL="https://s3.example.com/": must be https://endpoint/bucket[/prefix] (http only to a loopback address)',
  ],
  [
    "an S3 region in capitals",
    { BACKUP_S3_REGION: "US-EAST-1" },
    'BACKUP_S3_REGION="US-EAST-1": must be a region name, e.g. us-east-1',
  ],
  [
    "a MICR font that is not there",
    { CHECK_MICR_FONT: "/nonexistent/micr.ttf" },
    'CHECK_MICR_FONT="/nonexistent/micr.ttf": must name an existing file',
  ],
  [
    "a MICR font that is a directory",
    { CHECK_MICR_FONT: "/" },
    'CHECK_MICR_FONT="/": must name a file, not a directory or device',
  ],
];

for (const [name, env, problem] of edges) {
  Deno.test(`a rule at its edge: ${name}`, () => {
    const environment = { ...secrets, LIVE_NOTIFICATIONS: "off", ...env };
    if (problem === null) {
      loadConfig(environment, { requireNotificationTransports: true });
      return;
    }
    assert.throws(() => loadConfig(environment), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.problems, [problem]);
      return true;
    });
  });
}

Deno.test("CHECK_MICR_FONT: unset there is no font; set, its file is read once, at start", async () => {
  assert.equal(loadConfig({ ...secrets }).checkMicrFont, null);
  assert.equal(loadConfig({ ...secrets, CHECK_MICR_FONT: "" }).checkMicrFont, null);
  const path = await Deno.makeTempFile({ suffix: ".ttf" });
  await Deno.writeFile(path, new Uint8Array([0, 1, 0, 0, 7]));
  const config = loadConfig({ ...secrets, CHECK_MICR_FONT: path });
  await Deno.remove(path);
  // The font stays when its file goes: nothing reads the file again.
  assert.deepEqual(config.checkMicrFont, new Uint8Array([0, 1, 0, 0, 7]));
});

Deno.test("HEADER_TIMEOUT_MS left unset is 0 (Deno.serve) on a loopback HOST and 10 s on any other; a value given is kept", () => {
  const timeout = (env: Record<string, string>) =>
    loadConfig({ ...secrets, ...env }).limits.HEADER_TIMEOUT_MS;
  assert.deepEqual(
    ["127.0.0.1", "127.0.0.2", "localhost", "::1"].map((HOST) => timeout({ HOST })),
    [0, 0, 0, 0],
  );
  assert.equal(timeout({}), 0, "the default HOST is loopback");
  assert.deepEqual(
    ["0.0.0.0", "10.0.0.5", "::", "payments.internal"].map((HOST) => timeout({ HOST })),
    [10_000, 10_000, 10_000, 10_000],
  );
  assert.equal(timeout({ HOST: "127.0.0.1", HEADER_TIMEOUT_MS: "2000" }), 2000);
  assert.equal(timeout({ HOST: "0.0.0.0", HEADER_TIMEOUT_MS: "0" }), 0);
  assert.throws(
    () => loadConfig({ ...secrets, HOST: "127.0.0.1", HEADER_TIMEOUT_MS: "50" }),
    (error: Error) =>
      error instanceof ConfigError &&
      error.message.includes(
        "HEADER_TIMEOUT_MS=50: must be 0 (Deno's own server, behind a proxy) or at least 100",
      ),
  );
});
