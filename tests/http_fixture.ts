/**
 * An application over temporary test and live databases with a fake clock and a small cast of
 * identities (inserted directly, so these tests do not depend on the operator tooling).
 */
import { addFunds } from "../lib/funding/store.ts";
import { jobHandlersByEnvironment } from "../lib/payouts/runtime.ts";
import { runtimeSettingsOf } from "../lib/payouts/settings.ts";
import { createApp } from "../routes/app.ts";
import { openApiDocument } from "../routes/openapi/v1.ts";
import type { AppDeps, RailJobs } from "../routes/context.ts";
import type { Database } from "../db/client.ts";
import type { Environment } from "../lib/platform/config.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { SecretBox } from "../lib/platform/crypto.ts";
import { CredentialCache } from "../lib/identity/credential_cache.ts";
import { loadConfig } from "../lib/platform/config.ts";
import { keyHint, newId, newKeySecret, sha256Hex } from "../lib/platform/keys.ts";
import { openTempDatabase } from "./helpers.ts";
import { validatorFor } from "./response_validation.ts";

export interface Cast {
  acme: { id: string; tin: string; companyKey: string; autoLineId: string };
  beacon: { id: string; tin: string; companyKey: string; lineId: string };
  /** Member of Acme only. */
  alice: { id: string; keyTest: string; keyLive: string };
  /** Member of Acme and Beacon. */
  morgan: { id: string; keyTest: string };
  /** Member of Beacon only. */
  bob: { id: string; keyTest: string };
  acmeAutoKeyTest: string;
  acmeAutoKeyLive: string;
  beaconKeyTest: string;
}

export interface HttpFixture {
  app: ReturnType<typeof createApp>;
  /** The rails' jobs given at once, as a test runs them. */
  deps: AppDeps & { readonly jobHandlers: RailJobs };
  clock: FakeClock;
  cast: Cast;
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

async function insertKey(
  database: Database,
  secret: string,
  owner: {
    kind: "company" | "user" | "line";
    companyId?: string;
    userId?: string;
    lineId?: string;
  },
  now: number,
): Promise<string> {
  const id = newId("key");
  await database.writer.write((tx) =>
    tx.execute({
      sql:
        `INSERT INTO api_keys (id, kind, secret_hash, hint, company_id, user_id, line_id, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        id,
        owner.kind,
        "",
        keyHint(secret),
        owner.companyId ?? null,
        owner.userId ?? null,
        owner.lineId ?? null,
        now,
      ],
    }).then(async () =>
      tx.execute({
        sql: "UPDATE api_keys SET secret_hash = ? WHERE id = ?",
        args: [await sha256Hex(secret), id],
      })
    )
  );
  return id;
}

export async function openHttpFixture(
  env: Record<string, string> = {},
  options: {
    /** Opens an environment's database (default: a temporary file); a remote one, say. */
    openDatabase?: (dir: string, environment: Environment) => Promise<Database>;
  } = {},
): Promise<HttpFixture> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-http-" });
  const open = options.openDatabase ?? openTempDatabase;
  const databases = {
    test: await open(dir, "test"),
    live: await open(dir, "live"),
  };
  const clock = new FakeClock();
  const now = clock.now();
  const config = loadConfig({
    DATA_DIR: dir,
    JWT_SECRET: "j".repeat(40),
    ENCRYPTION_KEY: btoa("e".repeat(32)),
    ...env,
  });
  const logs: Record<string, unknown>[] = [];
  const secretBox = await SecretBox.fromBase64Key(config.encryptionKey!);
  const deps: HttpFixture["deps"] = {
    config,
    databases,
    clock,
    jobHandlers: jobHandlersByEnvironment(
      { ...runtimeSettingsOf(config), clock },
      databases,
      secretBox,
    ),
    secretBox,
    lineKeyCache: new CredentialCache({ ttlMs: 5000, entriesMax: 1000 }),
    jwtSecret: new TextEncoder().encode(config.jwtSecret!),
    log: (entry) => logs.push(entry),
  };

  const ids = {
    acme: newId("co"),
    beacon: newId("co"),
    alice: newId("usr"),
    morgan: newId("usr"),
    bob: newId("usr"),
    auto: newId("line"),
    beaconLine: newId("line"),
  };
  for (const database of Object.values(databases)) {
    await database.writer.write(async (tx) => {
      const statements = [
        [
          "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Acme Mutual', '111111111', ?)",
          ids.acme,
        ],
        [
          "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Beacon Casualty', '222222222', ?)",
          ids.beacon,
        ],
        ["INSERT INTO users (id, email, created_at) VALUES (?, 'alice@acme.test', ?)", ids.alice],
        ["INSERT INTO users (id, email, created_at) VALUES (?, 'morgan@both.test', ?)", ids.morgan],
        ["INSERT INTO users (id, email, created_at) VALUES (?, 'bob@beacon.test', ?)", ids.bob],
      ] as const;
      for (const [sql, id] of statements) await tx.execute({ sql, args: [id, now] });
      for (
        const [user, company] of [[ids.alice, ids.acme], [ids.morgan, ids.acme], [
          ids.morgan,
          ids.beacon,
        ], [ids.bob, ids.beacon]]
      ) {
        await tx.execute({
          sql: "INSERT INTO memberships (user_id, company_id, created_at) VALUES (?, ?, ?)",
          args: [user, company, now],
        });
      }
      await tx.execute({
        sql:
          "INSERT INTO business_lines (id, company_id, code, created_at) VALUES (?, ?, 'auto', ?)",
        args: [ids.auto, ids.acme, now],
      });
      await tx.execute({
        sql:
          "INSERT INTO business_lines (id, company_id, code, created_at) VALUES (?, ?, 'default', ?)",
        args: [ids.beaconLine, ids.beacon, now],
      });
    });
  }
  const acmeCompanyKey = newKeySecret("company");
  const beaconCompanyKey = newKeySecret("company");
  for (const database of Object.values(databases)) {
    await insertKey(database, acmeCompanyKey, { kind: "company", companyId: ids.acme }, now);
    await insertKey(database, beaconCompanyKey, { kind: "company", companyId: ids.beacon }, now);
  }
  const secrets = {
    aliceTest: newKeySecret("user", "test"),
    aliceLive: newKeySecret("user", "live"),
    morganTest: newKeySecret("user", "test"),
    bobTest: newKeySecret("user", "test"),
    autoTest: newKeySecret("line", "test"),
    autoLive: newKeySecret("line", "live"),
    beaconTest: newKeySecret("line", "test"),
  };
  await insertKey(databases.test, secrets.aliceTest, { kind: "user", userId: ids.alice }, now);
  await insertKey(databases.live, secrets.aliceLive, { kind: "user", userId: ids.alice }, now);
  await insertKey(databases.test, secrets.morganTest, { kind: "user", userId: ids.morgan }, now);
  await insertKey(databases.test, secrets.bobTest, { kind: "user", userId: ids.bob }, now);
  await insertKey(databases.test, secrets.autoTest, {
    kind: "line",
    companyId: ids.acme,
    lineId: ids.auto,
  }, now);
  await insertKey(databases.live, secrets.autoLive, {
    kind: "line",
    companyId: ids.acme,
    lineId: ids.auto,
  }, now);
  await insertKey(databases.test, secrets.beaconTest, {
    kind: "line",
    companyId: ids.beacon,
    lineId: ids.beaconLine,
  }, now);

  return {
    app: validatingResponses(createApp(deps), config),
    deps,
    clock,
    logs,
    cast: {
      acme: { id: ids.acme, tin: "111111111", companyKey: acmeCompanyKey, autoLineId: ids.auto },
      beacon: {
        id: ids.beacon,
        tin: "222222222",
        companyKey: beaconCompanyKey,
        lineId: ids.beaconLine,
      },
      alice: { id: ids.alice, keyTest: secrets.aliceTest, keyLive: secrets.aliceLive },
      morgan: { id: ids.morgan, keyTest: secrets.morganTest },
      bob: { id: ids.bob, keyTest: secrets.bobTest },
      acmeAutoKeyTest: secrets.autoTest,
      acmeAutoKeyLive: secrets.autoLive,
      beaconKeyTest: secrets.beaconTest,
    },
    async close() {
      await databases.test.close();
      await databases.live.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * The app, with every `app.request` answer checked against the OpenAPI document it serves: a
 * documented path and method must answer a documented status with a body its schema accepts,
 * else the request throws and the test fails.
 */
function validatingResponses(
  app: ReturnType<typeof createApp>,
  config: AppDeps["config"],
): ReturnType<typeof createApp> {
  const request = app.request;
  // The document /openapi.json serves, built here so the check adds no request to logs or metrics.
  const validator = validatorFor(JSON.stringify(openApiDocument(config)));
  app.request = async (input, init, env, executionContext) => {
    const response = await request(input, init, env, executionContext);
    const url = input instanceof Request
      ? new URL(input.url)
      : new URL(String(input), "http://localhost");
    const method = (input instanceof Request ? input.method : init?.method ?? "GET").toUpperCase();
    await validator.check(method, url.pathname, response);
    return response;
  };
  return app;
}

/** Runs `fn` with a fresh fixture and always closes it. */
export async function withHttpFixture(
  fn: (fixture: HttpFixture) => Promise<void>,
  env?: Record<string, string>,
): Promise<void> {
  const fixture = await openHttpFixture(env);
  try {
    await fn(fixture);
  } finally {
    await fixture.close();
  }
}

/** Credits a line in the test environment with a received wire (or an ACH funding). */
async function fundLine(
  f: HttpFixture,
  line: { companyId: string; lineId: string },
  cents: number,
  method: "WireTransfer" | "ACH",
): Promise<void> {
  const funded = await f.deps.databases.test.writer.write((tx) =>
    addFunds(
      tx,
      {
        ...line,
        paymentMethod: method,
        amountCents: cents,
        description: "test funding",
        largeDisbursement: false,
        requestFingerprint: crypto.randomUUID(),
      },
      "test",
      f.clock.now(),
    )
  );
  if (!funded.ok) throw new Error(funded.message);
}

/** Credits Acme's `auto` line in the test environment with a received wire. */
export async function fundAcmeAuto(
  f: HttpFixture,
  cents: number,
  method: "WireTransfer" | "ACH" = "WireTransfer",
): Promise<void> {
  await fundLine(f, { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId }, cents, method);
}

/** Beacon's line funded as the fixture funds Acme's. */
export async function fundBeacon(f: HttpFixture, cents: number): Promise<void> {
  await fundLine(
    f,
    { companyId: f.cast.beacon.id, lineId: f.cast.beacon.lineId },
    cents,
    "WireTransfer",
  );
}

export const basic = (user: string, password: string): string =>
  `Basic ${btoa(`${user}:${password}`)}`;
