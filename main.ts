/**
 * The composition root: configuration → databases → application → server, scheduler and
 * graceful shutdown. `--dev` runs the local sandbox: generated secrets, seeded companies, and the
 * credentials printed and written to DATA_DIR/sandbox-credentials.json.
 */
import { Metrics } from "./lib/platform/metrics.ts";
import type { Database } from "./db/client.ts";
import { acquireWriterLock, nodeIdOf, writeAdminToken, writeServiceFile } from "./db/data_dir.ts";
import { loadOrCreateDevSecrets, markDevDataDir } from "./db/dev_secrets.ts";
import { filePathOf } from "./db/file_url.ts";
import type { SandboxCredentials } from "./lib/sandbox/seed.ts";
import { elapsed, systemClock } from "./lib/platform/clock.ts";
import { SecretBox } from "./lib/platform/crypto.ts";
import {
  type Config,
  ConfigError,
  type Environment,
  loadConfig,
  missingNotificationTransports,
} from "./lib/platform/config.ts";
import { createLazyApp } from "./routes/lazy_app.ts";
import { createApiCore } from "./routes/api_core.ts";
import { type RateLimiter, rateLimiterOf } from "./lib/platform/rate_limit.ts";
import { auditKeysComing } from "./lib/audit/keys_in_use.ts";
import type { AppDeps, RailJobs } from "./routes/context.ts";
import { runtimeSettingsOf } from "./lib/payouts/settings.ts";

/** How often the in-process loop looks for due jobs. */
const SCHEDULER_INTERVAL_MS = 1000;
const CREDENTIAL_CACHE_ENTRIES_MAX = 10_000;
/** How often due webhook deliveries are looked for, how many at once, over how many endpoints. */
const DISPATCHER_INTERVAL_MS = 500;
const WEBHOOK_BATCH_SIZE = 200;
const WEBHOOK_ENDPOINTS_IN_PARALLEL = 16;
const WEBHOOK_PER_ENDPOINT_CONCURRENCY = 8;
/** How often due live notifications are looked for, how many at once, and how long a send may take. */
const NOTIFICATION_INTERVAL_MS = 1000;
const NOTIFICATION_BATCH_SIZE = 50;
const NOTIFICATION_CONCURRENCY = 4;
const NOTIFICATION_SEND_TIMEOUT_MS = 20_000;
/**
 * How long after the app has loaded the worker loops start: the first API requests a fresh
 * process gets do not wait behind their first claims. Each loop's first sweep comes one interval
 * after it starts.
 */
const WORKERS_START_DELAY_MS = 500;
/**
 * How long after the API's app has loaded the rest (the rails' jobs, the console, the admin
 * endpoint) starts loading, unless a request for it comes first. Evaluating its modules holds the
 * event loop (about 100 ms on a quiet machine): meanwhile no new request is even read, so the first
 * API requests and readiness probes should not wait behind it.
 */
const LATER_SURFACES_LOAD_DELAY_MS = 500;
/**
 * How long after it listens the service starts opening its databases and loading the API's app
 * when no request has come (one that comes starts them after its answer, or at once when it needs
 * them): requests already waiting at the listen are answered first, by the API's core.
 */
const API_LOAD_DELAY_MS = 50;
/** Files and directories the service creates are readable by its own user only. */
const PRIVATE_FILES_UMASK = 0o077;
/** How often the backup worker looks whether a scheduled backup is due (BACKUP_INTERVAL_MINUTES). */
const BACKUP_CHECK_INTERVAL_MS = 30_000;

function fail(message: string, code = 1): never {
  console.error(message);
  Deno.exit(code);
}

function printSandboxBanner(baseUrl: string, credentials: SandboxCredentials, file: string): void {
  const lines = [
    "",
    "Disbursement sandbox is running (test and live databases, test environment funded).",
    "",
    `  API base URL      ${baseUrl}`,
    `  Sandbox inbox     ${baseUrl}/sandbox/inbox`,
    `  Operator console  ${baseUrl}/console`,
    `  Health            ${baseUrl}/healthz   ${baseUrl}/readyz`,
    `  Credentials file  ${file}`,
    "",
  ];
  for (const company of credentials.companies) {
    lines.push(`  ${company.name}  TIN ${company.tin}  CompanyApiKey ${company.company_api_key}`);
    for (const user of company.users) {
      lines.push(`    user ${user.email}  test key ${user.api_key_test}`);
    }
    for (const line of company.lines) {
      lines.push(`    line ${line.line.padEnd(8)} test key ${line.key_test}`);
    }
  }
  const multi = credentials.multi_company_user;
  const acmeLine = credentials.companies[0].lines[0];
  lines.push(
    `  Multi-company user ${multi.email}  test key ${multi.api_key_test}  (TINs ${
      multi.tins.join(", ")
    })`,
  );
  for (const operator of credentials.operators ?? []) {
    lines.push(
      `  Operator (${operator.role.padEnd(6)}) ${
        operator.email.padEnd(20)
      } password ${operator.password}`,
    );
  }
  if (credentials.operators) {
    lines.push("    (console and deno task admin login --as EMAIL; no TOTP in dev mode)");
  }
  lines.push(
    "",
    "Try it:",
    `  curl -s -X POST -u ${credentials.companies[0].tin}:${
      credentials.companies[0].users[0].api_key_test
    } ${baseUrl}/api/authenticate`,
    `  curl -s -H "Authorization: Bearer ${acmeLine.key_test}" ${baseUrl}/v1/ledgers/${acmeLine.line}/balance`,
    "",
  );
  console.log(lines.join("\n"));
}

/** Starts the service: run as the entry, or by cli/start.ts from the bundle or from here. */
export async function main(): Promise<void> {
  // Whatever starts the service (systemd's UMask=0077 or a shell's 022), what it creates in
  // DATA_DIR (databases, journals, tokens, backups) is its owner's alone.
  Deno.umask(PRIVATE_FILES_UMASK);
  const dev = Deno.args.includes("--dev");
  let config;
  try {
    config = loadConfig(Deno.env.toObject(), { dev, requireNotificationTransports: true });
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 2);
    throw error;
  }
  Deno.mkdirSync(config.dataDir, { recursive: true });
  const lock = await acquireWriterLock(config.dataDir);
  if (!lock.ok) fail(lock.message);

  if (dev) {
    const files = [config.databaseUrls.test, config.databaseUrls.live]
      .filter((url) => url.startsWith("file:")).map(filePathOf);
    const refused = await markDevDataDir(config.dataDir, files);
    if (refused !== null) fail(`cannot start: ${refused}`, 2);
  }
  const secrets = dev
    ? { ...(await loadOrCreateDevSecrets(config.dataDir)), ...definedSecrets(config) }
    : { jwtSecret: config.jwtSecret!, encryptionKey: config.encryptionKey! };

  const metrics = new Metrics();
  const log = config.logFormat === "json"
    ? (entry: Record<string, unknown>) => console.log(JSON.stringify(entry))
    : undefined;
  // One per-credential limit for the API's core and the API's app.
  const rateLimiter = rateLimiterOf(config.limits);
  // The databases, the secrets' box, the audit key and the apps' loads: in dev before listening
  // (the seed needs them and the banner prints what it made), and on a libSQL server (a node
  // refuses an unreachable or older primary before it takes any request); else once the service
  // is asked for something that needs them, after its first answer or shortly after it listens
  // (the lazy app's load of the API's app starts them), since the first answers (health, and the
  // API's core: a request without a credential, a wrong method) need none of them. A database
  // that cannot be used stops the service either way, before /readyz ever says 200.
  let servicesStarted: (services: Promise<Services>) => void = () => {};
  const started = new Promise<Services>((resolve) => servicesStarted = resolve);
  let starting: Promise<Services> | undefined;
  const services = () => {
    if (starting) return starting;
    starting = startServices({ config, dev, secrets, metrics, log, rateLimiter });
    servicesStarted(starting);
    return starting;
  };
  const opensFirst = dev ||
    Object.values(config.databaseUrls).some((url) => !url.startsWith("file:"));
  const credentials = opensFirst ? (await services()).credentials : null;

  const { limits } = config;
  // Facing clients itself, the service bounds their headers and connections; HEADER_TIMEOUT_MS=0
  // leaves both to a reverse proxy and serves with Deno's own (faster) server. The listener is
  // imported before the apps start loading, which would otherwise hold its import back: /healthz
  // answers while they load.
  const guarded = limits.HEADER_TIMEOUT_MS > 0 ? await import("./routes/guarded_server.ts") : null;
  const app = createLazyApp({
    databases: started.then((services) => services.databases),
    metrics,
    workerStallMs: config.limits.WORKER_STALL_MS,
    log,
    loadApi: async () => (await (await services()).loadApi()).fetch,
    load: async () => (await (await services()).loadRuntime()).fetch,
    // After the answer has gone: the key's module does not hold it back.
    afterFirstApiAnswer: () => elapsed(0).then(() => started).then((s) => s.askAuditKey()),
    core: createApiCore({ config, metrics, log, rateLimiter, clock: systemClock }),
    apiLoadDelayMs: API_LOAD_DELAY_MS,
  });

  const onListen = () => {
    if (credentials) {
      printSandboxBanner(config.baseUrl, credentials, `${config.dataDir}/sandbox-credentials.json`);
    } else {
      console.log(
        JSON.stringify({ level: "info", msg: "listening", host: config.host, port: config.port }),
      );
    }
  };
  const server = guarded
    ? guarded.serveGuarded({
      hostname: config.host,
      port: config.port,
      headerTimeoutMs: limits.HEADER_TIMEOUT_MS,
      connectionsPerAddressMax: limits.CONNECTIONS_PER_ADDRESS_MAX,
      connectionsMax: limits.CONNECTIONS_MAX,
      metrics,
      log: (entry) => console.error(JSON.stringify(entry)),
      onListen,
    }, app)
    : Deno.serve({ hostname: config.host, port: config.port, onListen }, app);
  const { databases, secretBox, loadApi, loadRuntime, auditKeyInUse } = await started;

  let stopping = false;
  // One worker loop each: a sweep that fails is logged and counted, and the next tick sweeps again.
  // A stop asked before the rest has loaded does not load it.
  const workers = loadApi().then(() => elapsed(LATER_SURFACES_LOAD_DELAY_MS))
    .then(() => stopping ? null : loadRuntime())
    .then(async (started) => {
      if (started === null) return null;
      await elapsed(WORKERS_START_DELAY_MS);
      // This process holds the DATA_DIR lock: the claims its node held before a crash are dead.
      await started.scheduler.takeOverOwnClaims();
      started.scheduler.start(SCHEDULER_INTERVAL_MS);
      started.dispatcher.start(DISPATCHER_INTERVAL_MS, metrics);
      started.notificationSender?.start(NOTIFICATION_INTERVAL_MS, metrics);
      // Its module came with the rails' jobs: a cutoff then starts no file worker of its own.
      (await import("./lib/ach/jobs.ts")).startFileWorker();
      (await import("./lib/ach/cutoffs.ts")).prepareBankTime();
      // Started now rather than at a restarted service's first large commit (a cutoff's).
      databases.live.startCheckpoints();
      databases.test.startCheckpoints();
      return started;
    });
  // Scheduled backups, when asked for: their module is loaded only then.
  // Each one also leaves a signed audit checkpoint beside its copy, and the ledger's signed
  // statements of the days that closed since the last one.
  // They start once the audit key is in use, which they do not make sooner.
  let backups: import("./lib/backup/jobs.ts").ScheduledBackups | null = null;
  if (config.limits.BACKUP_INTERVAL_MINUTES > 0) {
    auditKeyInUse.then(async () => {
      const { takeAuditCheckpoint } = await import("./lib/audit/service.ts");
      const { ScheduledBackups } = await import("./lib/backup/jobs.ts");
      const scheduled = new ScheduledBackups(config.databaseUrls, {
        ...config.backup,
        intervalMinutes: config.limits.BACKUP_INTERVAL_MINUTES,
        keep: config.limits.BACKUP_KEEP,
        busyTimeoutMs: config.limits.DB_BUSY_TIMEOUT_MS,
        auditCheckpoint: (now) => takeAuditCheckpoint(databases, now),
        ledgerStatements: async (now) => {
          const { closeLedgerDays } = await import("./lib/ledger/statements.ts");
          const { currentAuditKeys } = await import("./lib/audit/anchor.ts");
          const keys = currentAuditKeys().ledgerStatements;
          return await Promise.all((["live", "test"] as const).map(async (environment) => ({
            environment,
            statements: await closeLedgerDays(
              { database: databases[environment], environment, secretBox, keys },
              now,
            ),
          })));
        },
      }, systemClock);
      if (stopping) return;
      scheduled.start(BACKUP_CHECK_INTERVAL_MS, metrics);
      backups = scheduled;
    }, () => {}); // the audit key's failure is logged above
  }

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(JSON.stringify({ level: "info", msg: "shutting down", signal }));
    // In-flight requests finish; new connections are refused.
    await server.shutdown();
    const started = await workers;
    await started?.scheduler.stop();
    // In-flight deliveries finish (each bounded by the webhook timeout) and are recorded.
    await started?.dispatcher.stop();
    // Sends in flight finish (each bounded by the send timeout) and are recorded.
    await started?.notificationSender?.stop();
    // A backup in flight finishes: its copy reads the databases closed next.
    await backups?.stop();
    started?.smtp?.close();
    await databases.test.close();
    await databases.live.close();
    await lock.value.release();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", () => shutdown("SIGINT"));
  Deno.addSignalListener("SIGTERM", () => shutdown("SIGTERM"));
}

/** What the service's apps and workers run on, made by startServices. */
interface Services {
  readonly databases: Record<Environment, Database>;
  readonly secretBox: SecretBox;
  /** The sandbox's credentials, in dev mode (null when DATA_DIR holds data but not them). */
  readonly credentials: SandboxCredentials | null;
  /** Imports and builds the API's app, once. */
  readonly loadApi: () => Promise<Api>;
  /** Imports and builds the whole app and the workers (not started), once. */
  readonly loadRuntime: () => Promise<Runtime>;
  /** Makes the audit chain's keys (Node's crypto), once asked. */
  readonly askAuditKey: () => void;
  /** Settles once the audit key is in use (a legacy log keyed). */
  readonly auditKeyInUse: Promise<void>;
}

/**
 * Opens the databases (a database that cannot be used stops the service), and prepares the
 * secrets' box, the audit key and the loads of the API's app, the rails' jobs and the whole app.
 * In dev mode the sandbox is seeded.
 */
async function startServices(
  options: {
    readonly config: Config;
    readonly dev: boolean;
    readonly secrets: { readonly jwtSecret: string; readonly encryptionKey: string };
    readonly metrics: Metrics;
    readonly log: ((entry: Record<string, unknown>) => void) | undefined;
    readonly rateLimiter: RateLimiter | null;
  },
): Promise<Services> {
  const { config, dev, secrets, metrics } = options;
  // This process holds the DATA_DIR lock: its admin token and address replace the last ones.
  const adminToken = writeAdminToken(config.dataDir);
  // Written before the API's app loads, so a CLI that sees the service ready also finds its
  // address.
  writeServiceFile(config.dataDir, { admin_url: `http://127.0.0.1:${config.port}/admin` });
  warnOfUnsentLiveNotifications(config);
  // drizzle and the schema load with the routes and the workers, not here.
  const { openEnvironmentDatabases, DatabaseStartError } = await import("./db/client.ts");
  let databases: Record<Environment, Database>;
  try {
    databases = await openEnvironmentDatabases(config, { loadQueryLayer: dev });
  } catch (error) {
    if (error instanceof DatabaseStartError) fail(`cannot start: ${error.message}`, 2);
    throw error;
  }

  const secretBox = await SecretBox.fromBase64Key(secrets.encryptionKey);
  // The audit chain's key, outside the database: set before anything appends an audit row (the
  // dev seed, the surfaces, the backup worker's checkpoints), loaded only then (issue 21). A log
  // written before the chain had a key gets its keyed marker first, once. Its module imports Node's
  // crypto (about 15 ms of CPU): it is made right after the API's first answer, or with the rest
  // of the app, and an audit row appended before waits for it.
  const auditKey = config.auditKey ?? secrets.encryptionKey;
  let askAuditKey = () => {};
  const auditKeys = new Promise<void>((resolve) => askAuditKey = resolve).then(async () => {
    const { auditKeysFrom, useAuditKeys } = await import("./lib/audit/anchor.ts");
    useAuditKeys(auditKeysFrom(auditKey));
  });
  auditKeysComing(auditKeys);
  const auditKeyInUse = auditKeys.then(async () => {
    const { keyLegacyAuditChains } = await import("./lib/audit/service.ts");
    await keyLegacyAuditChains(databases, "service start", Date.now());
  });
  auditKeyInUse.catch((error) =>
    console.error(JSON.stringify({
      time: new Date().toISOString(),
      level: "error",
      msg: "the audit key could not be put in use",
      error: error instanceof Error ? error.stack ?? error.message : String(error),
    }))
  );
  const useAuditKey = () => (askAuditKey(), auditKeyInUse);
  // A log whose keyed marker is still to come gets it before the API's app answers: no request
  // may append a row before it.
  const keyLegacyLogFirst = async () => {
    const { chainEndsUnkeyed } = await import("./lib/audit/store.ts");
    const unkeyed = await Promise.all(
      [databases.live, databases.test].map((database) => chainEndsUnkeyed(database.readClient)),
    );
    if (unkeyed.includes(true)) await useAuditKey();
  };
  let credentials: SandboxCredentials | null = null;
  if (dev) {
    // The seed (and the operator password hashing it needs) is for dev mode only.
    await useAuditKey();
    const { loadOrSeedSandbox, SandboxSeedError } = await import("./lib/sandbox/seed.ts");
    try {
      credentials = await loadOrSeedSandbox(databases, config, { clock: systemClock, secretBox });
    } catch (error) {
      if (error instanceof SandboxSeedError) fail(`cannot start: ${error.message}`, 2);
      throw error;
    }
    if (!credentials) {
      console.error(
        `warning: ${config.dataDir} holds data but no sandbox-credentials.json: rotate keys with ` +
          "`deno task admin key:rotate`, or remove DATA_DIR to seed afresh",
      );
    }
  }

  // The surfaces and the workers (nearly every module) are imported once, in the background
  // from here on: the API's app first (/readyz says 200 when it answers), then the rails' jobs,
  // the whole app and the workers.
  const appDeps = {
    config,
    databases,
    secretBox,
    metrics,
    jwtSecret: new TextEncoder().encode(secrets.jwtSecret),
    adminToken,
    log: options.log,
    ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
  };
  // Each load is made once; after a failure the next caller tries again.
  const once = <T>(load: () => Promise<T>) => {
    let loading: Promise<T> | undefined;
    return () =>
      loading ??= load().catch((error) => {
        loading = undefined;
        throw error;
      });
  };
  const loadRailJobs = once(async () => {
    const { jobHandlersByEnvironment } = await import("./lib/payouts/runtime.ts");
    // A cutoff's send rests between its units while the API answers requests.
    const settings = { ...runtimeSettingsOf(config), apiBusy: () => metrics.apiBusy };
    return jobHandlersByEnvironment(settings, databases, secretBox);
  });
  const loadApi = once(async () =>
    (await Promise.all([buildApi({ ...appDeps, jobHandlers: loadRailJobs }), keyLegacyLogFirst()]))[
      0
    ]
  );
  // The whole app and the workers use the audit keys as they are built.
  const loadRuntime = once(() =>
    Promise.all([loadApi(), useAuditKey()]).then(async ([api]) =>
      buildRuntime({
        ...appDeps,
        lineKeyCache: api.lineKeyCache,
        jobHandlers: await loadRailJobs(),
        nodeId: nodeIdOf(config.dataDir),
      })
    )
  );
  return { databases, secretBox, credentials, loadApi, loadRuntime, askAuditKey, auditKeyInUse };
}

/** The API's app, and the line-key cache the whole app shares with it. */
interface Api {
  readonly fetch: (request: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>;
  readonly lineKeyCache: AppDeps["lineKeyCache"];
}

/** What the API's app and the whole app are built on, as main wires them. */
type ServiceDeps = Omit<AppDeps, "clock" | "lineKeyCache" | "metrics" | "adminToken"> & {
  readonly metrics: Metrics;
  readonly adminToken: string;
};

/** Imports and builds the API's app: no console, admin command, sandbox page or rail's job. */
async function buildApi(deps: ServiceDeps): Promise<Api> {
  const [{ createApiApp }, { CredentialCache }] = await Promise.all([
    import("./routes/api_app.ts"),
    import("./lib/identity/credential_cache.ts"),
    import("./db/query_layer.ts").then((layer) => layer.loadQueryLayer()),
  ]);
  const lineKeyCache: AppDeps["lineKeyCache"] = new CredentialCache({
    // Bounds how late a revocation made through another node is seen here.
    ttlMs: deps.config.limits.CREDENTIAL_CACHE_TTL_MS,
    entriesMax: CREDENTIAL_CACHE_ENTRIES_MAX,
  });
  const app = createApiApp({ ...deps, clock: systemClock, lineKeyCache });
  return { fetch: app.fetch, lineKeyCache };
}

/** What runs once the API answers: the whole app and the workers. */
interface Runtime {
  readonly fetch: (request: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>;
  readonly scheduler: import("./db/scheduler.ts").Scheduler;
  readonly dispatcher: import("./lib/webhooks/dispatcher.ts").WebhookDispatcher;
  readonly notificationSender: import("./lib/notify/outbox.ts").NotificationSender | null;
  readonly smtp: import("./lib/notify/smtp.ts").SmtpTransport | null;
}

/** Imports and builds the whole app and the workers (not started). */
async function buildRuntime(
  deps: ServiceDeps & {
    readonly lineKeyCache: AppDeps["lineKeyCache"];
    readonly jobHandlers: RailJobs;
    /** This DATA_DIR's node, in whose name the scheduler claims jobs. */
    readonly nodeId: string;
  },
): Promise<Runtime> {
  const { config, databases, secretBox, metrics, jwtSecret, jobHandlers } = deps;
  const [
    { Scheduler },
    { WebhookDispatcher, claimLeaseMs },
    { NotificationSender },
    { DocumentLinkSigner },
    { jsonBearerProvider, SmsTransport },
    { createApp },
    { catchUpPayeeIndex },
    { ledgerDayClosing },
    { currentAuditKeys },
    { sandboxStatementPlanning },
  ] = await Promise.all([
    import("./db/scheduler.ts"),
    import("./lib/webhooks/dispatcher.ts"),
    import("./lib/notify/outbox.ts"),
    import("./lib/documents/links.ts"),
    import("./lib/notify/sms.ts"),
    import("./routes/app.ts"),
    import("./lib/console/payee_index.ts"),
    import("./lib/ledger/statements.ts"),
    import("./lib/audit/anchor.ts"),
    import("./lib/reconciliation/sandbox_statements.ts"),
  ]);
  const scheduler = new Scheduler(databases, jobHandlers, systemClock, {
    metrics,
    leaseHolder: deps.nodeId,
    // The console's payee index catches up with new payouts (never on the create path).
    // Each line's bank days close shortly after their midnight, backups or not. A test company
    // whose money moves gets the sandbox bank's statements.
    upkeep: [
      { name: "payee index", run: catchUpPayeeIndex },
      ledgerDayClosing({ secretBox, keys: currentAuditKeys().ledgerStatements }, systemClock),
      sandboxStatementPlanning(secretBox),
    ],
  });
  const documentLinks = new DocumentLinkSigner(jwtSecret);
  const dispatcher = new WebhookDispatcher(databases, secretBox, systemClock, {
    batchSize: WEBHOOK_BATCH_SIZE,
    endpointsInParallel: WEBHOOK_ENDPOINTS_IN_PARALLEL,
    perEndpointConcurrency: WEBHOOK_PER_ENDPOINT_CONCURRENCY,
    timeoutMs: config.limits.WEBHOOK_TIMEOUT_MS,
    leaseMs: claimLeaseMs(config.limits.WEBHOOK_TIMEOUT_MS),
    apiBusy: () => metrics.apiBusy,
    documentLink: async (environment, id) =>
      config.baseUrl + await documentLinks.link(environment, id, systemClock.now()),
  });
  const sends = (channel: "email" | "sms") => config.notifications.channels.includes(channel);
  // nodemailer is loaded only when live e-mail goes out through SMTP.
  const smtp = sends("email") && config.notifications.smtp
    ? new (await import("./lib/notify/smtp.ts")).SmtpTransport({
      ...config.notifications.smtp,
      timeoutMs: NOTIFICATION_SEND_TIMEOUT_MS,
      connectionsMax: NOTIFICATION_CONCURRENCY,
    })
    : null;
  const sms = sends("sms") && config.notifications.sms
    ? new SmsTransport(jsonBearerProvider(config.notifications.sms), {
      timeoutMs: NOTIFICATION_SEND_TIMEOUT_MS,
    })
    : null;
  const notificationSender = smtp || sms
    ? new NotificationSender(databases, systemClock, {
      transports: { ...(smtp ? { email: smtp } : {}), ...(sms ? { sms } : {}) },
      batchSize: NOTIFICATION_BATCH_SIZE,
      concurrency: NOTIFICATION_CONCURRENCY,
      sendTimeoutMs: NOTIFICATION_SEND_TIMEOUT_MS,
      leaseMs: NOTIFICATION_SEND_TIMEOUT_MS *
        (Math.ceil(NOTIFICATION_BATCH_SIZE / NOTIFICATION_CONCURRENCY) + 1),
    })
    : null;
  const app = createApp({ ...deps, clock: systemClock });
  return { fetch: app.fetch, scheduler, dispatcher, notificationSender, smtp };
}

/** Says once, at start, when live payee messages will wait in the outbox instead of leaving. */
function warnOfUnsentLiveNotifications(config: Config): void {
  const { channels } = config.notifications;
  const missing = missingNotificationTransports(config.notifications);
  const unsent = (["email", "sms"] as const).filter((channel) => !channels.includes(channel));
  const messages = [
    ...(missing.length > 0
      ? [
        `live payee notifications have no transport: set ${missing.join(" and ")}; until then ` +
        "those live messages stay pending in the outbox (test-environment messages go to " +
        "/sandbox/inbox)",
      ]
      : []),
    ...(unsent.length > 0
      ? [
        `LIVE_NOTIFICATIONS=${channels.length === 0 ? "off" : channels[0]}: live ${
          unsent.map((channel) => channel === "email" ? "e-mail" : "SMS").join(" and ")
        } messages stay pending in the outbox, never sent`,
      ]
      : []),
  ];
  for (const message of messages) {
    console.error(
      config.dev ? `\nWARNING: ${message}\n` : JSON.stringify({ level: "warn", msg: message }),
    );
  }
}

/** Secrets given in the environment win over the generated dev ones. */
function definedSecrets(config: { jwtSecret: string | null; encryptionKey: string | null }) {
  return {
    ...(config.jwtSecret ? { jwtSecret: config.jwtSecret } : {}),
    ...(config.encryptionKey ? { encryptionKey: config.encryptionKey } : {}),
  };
}

if (import.meta.main) await main();
