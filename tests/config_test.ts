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

Deno.test("every limit of DESIGN 11 is configurable", () => {
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
