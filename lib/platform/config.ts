/**
 * Configuration, read once from an environment record and validated. A bad value stops the start
 * with a message naming the variable and the value seen. The rules are plain functions, not
 * valibot schemas: loading valibot cost every cold start about as much as everything else the
 * service does before its first /readyz (issue 21), and these checks need none of its parsing.
 */

const MIB = 1024 * 1024;
/** A NACHA entry carries its amount in 10 digits of cents: $99,999,999.99 at most. */
const NACHA_ENTRY_AMOUNT_MAX_CENTS = 9_999_999_999;

/** Every tunable with its default. Names end with their unit. */
export const configDefaults = {
  PORT: 8000,
  HOST: "127.0.0.1",
  DATA_DIR: "./data",
  LOG_FORMAT: "json",
  BODY_LIMIT_BYTES: MIB,
  DOCUMENT_BODY_LIMIT_BYTES: 14 * MIB,
  BODY_TIMEOUT_MS: 30_000,
  /**
   * How long a request's headers may take to arrive whole (then 408, connection closed); 0 serves
   * with Deno's own server, which has no such limit and no connection limits: only behind a
   * reverse proxy that enforces both. Left unset on a loopback HOST it is 0 (see
   * headerTimeoutDefault).
   */
  HEADER_TIMEOUT_MS: 10_000,
  /** Open connections one client address may hold (0: no limit). */
  CONNECTIONS_PER_ADDRESS_MAX: 256,
  /** Open connections in all (0: no limit); keep it under the process's open-file limit. */
  CONNECTIONS_MAX: 8192,
  DOCUMENT_SIZE_MAX_BYTES: 10 * MIB,
  PAYEES_PER_DISBURSEMENT_MAX: 500,
  PARTIES_PER_DISBURSEMENT_MAX: 20,
  AMOUNT_MIN_CENTS: 1,
  AMOUNT_MAX_CENTS: 100_000_000,
  FUNDING_AMOUNT_MAX_CENTS: NACHA_ENTRY_AMOUNT_MAX_CENTS,
  STRING_LENGTH_MAX: 255,
  METADATA_KEYS_MAX: 50,
  METADATA_KEY_LENGTH_MAX: 40,
  METADATA_VALUE_LENGTH_MAX: 500,
  RATE_LIMIT_RPS: 100,
  RESEND_PER_HOUR_MAX: 5,
  TOKEN_TTL_SECONDS: 3600,
  KEY_GRACE_SECONDS: 86_400,
  IDEMPOTENCY_TTL_SECONDS: 86_400,
  IDEMPOTENCY_LEASE_SECONDS: 60,
  IDEMPOTENCY_KEY_LENGTH_MAX: 255,
  DB_BUSY_TIMEOUT_MS: 5000,
  WRITE_GROUP_UNITS_MAX: 512,
  WEBHOOK_TIMEOUT_MS: 10_000,
  PORTAL_LINK_TTL_DAYS: 30,
  OFFER_TTL_DAYS: 90,
  READ_CACHE_ENTRIES: 10_000,
  /**
   * How long a node reuses a line-key lookup: a key revoked or rotated through another node
   * (several nodes on one libSQL server) is refused here at most this long after; 0 reads it
   * on every request.
   */
  CREDENTIAL_CACHE_TTL_MS: 5000,
  /** A live bank file whose total is over this waits for a second admin (dual control). */
  BANK_FILE_APPROVAL_LIMIT_CENTS: 10_000_000,
  /** Minutes between scheduled backups; 0 turns them off. */
  BACKUP_INTERVAL_MINUTES: 0,
  /** Scheduled backups kept in BACKUP_DIR (and BACKUP_COPY_DIR), newest first. */
  BACKUP_KEEP: 7,
  /** A worker loop's sweep running longer than this makes /readyz say worker_stalled. */
  WORKER_STALL_MS: 300_000,
} as const;

/** What a numeric setting must be: a whole number within these bounds. */
interface WholeNumberRule {
  readonly min: number;
  readonly max?: number;
}

const portNumber: WholeNumberRule = { min: 1, max: 65535 };
const count = (min: number, max?: number): WholeNumberRule => ({ min, max });

/** Names of the numeric settings and the rule each must satisfy. */
const numericRules = {
  PORT: portNumber,
  BODY_LIMIT_BYTES: count(1024),
  DOCUMENT_BODY_LIMIT_BYTES: count(1024),
  BODY_TIMEOUT_MS: count(100),
  HEADER_TIMEOUT_MS: count(0),
  CONNECTIONS_PER_ADDRESS_MAX: count(0),
  CONNECTIONS_MAX: count(0),
  DOCUMENT_SIZE_MAX_BYTES: count(1024),
  PAYEES_PER_DISBURSEMENT_MAX: count(1),
  PARTIES_PER_DISBURSEMENT_MAX: count(0),
  AMOUNT_MIN_CENTS: count(1),
  AMOUNT_MAX_CENTS: count(1),
  // Every ACH funding debit must fit a bank file's entry.
  FUNDING_AMOUNT_MAX_CENTS: count(1, NACHA_ENTRY_AMOUNT_MAX_CENTS),
  STRING_LENGTH_MAX: count(1),
  METADATA_KEYS_MAX: count(0),
  METADATA_KEY_LENGTH_MAX: count(1),
  METADATA_VALUE_LENGTH_MAX: count(1),
  RATE_LIMIT_RPS: count(0),
  RESEND_PER_HOUR_MAX: count(1),
  TOKEN_TTL_SECONDS: count(60),
  KEY_GRACE_SECONDS: count(0),
  IDEMPOTENCY_TTL_SECONDS: count(60),
  IDEMPOTENCY_LEASE_SECONDS: count(1),
  IDEMPOTENCY_KEY_LENGTH_MAX: count(1),
  DB_BUSY_TIMEOUT_MS: count(0),
  WRITE_GROUP_UNITS_MAX: count(1),
  WEBHOOK_TIMEOUT_MS: count(100),
  PORTAL_LINK_TTL_DAYS: count(1),
  OFFER_TTL_DAYS: count(1),
  READ_CACHE_ENTRIES: count(0),
  CREDENTIAL_CACHE_TTL_MS: count(0),
  // 0: every live bank file needs a second admin.
  BANK_FILE_APPROVAL_LIMIT_CENTS: count(0),
  BACKUP_INTERVAL_MINUTES: count(0),
  BACKUP_KEEP: count(1),
  WORKER_STALL_MS: count(1000),
} as const;

type NumericName = keyof typeof numericRules;

/** What a textual setting must be: null when the value keeps the rule, else what it must be. */
type TextRule = (value: string) => string | null;

/** An empty value is an unset one (its default applies), so any text given is taken. */
const anyText: TextRule = () => null;
const matching = (pattern: RegExp, message: string): TextRule => (value) =>
  pattern.test(value) ? null : message;
const absoluteUrl: TextRule = (value) => URL.canParse(value) ? null : "must be an absolute URL";
const oneOf = (choices: readonly string[], message: string): TextRule => (value) =>
  choices.includes(value) ? null : message;
/** Every rule in order: the first one the value breaks names the problem. */
const allOf = (...rules: TextRule[]): TextRule => (value) => {
  for (const rule of rules) {
    const broken = rule(value);
    if (broken !== null) return broken;
  }
  return null;
};

const databaseUrl = matching(
  /^(file:|libsql:|https?:|wss?:)/,
  "must start with file:, libsql:, http(s): or ws(s):",
);
const SECRET_BYTES_MIN = 32;
const secret32: TextRule = (value) =>
  new TextEncoder().encode(value).length >= SECRET_BYTES_MIN
    ? null
    : `must be at least ${SECRET_BYTES_MIN} bytes`;
/** Long enough that guessing it is hopeless; `openssl rand -hex 32` gives 64 characters. */
const METRICS_TOKEN_LENGTH_MIN = 32;
const metricsToken: TextRule = (value) =>
  value.length >= METRICS_TOKEN_LENGTH_MIN
    ? null
    : `must be at least ${METRICS_TOKEN_LENGTH_MIN} characters`;
const encryptionKey = matching(
  /^[A-Za-z0-9+/]{43}=$/,
  "must be 32 bytes in base64 (44 characters)",
);
const smtpUrl = matching(
  /^smtps?:\/\/[^/?#]+/,
  "must be smtp://user:password@host:port or smtps://…",
);
const mailbox = matching(
  /^([^<>@]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/,
  "must be an e-mail address, optionally with a name: Payments <payments@example.com>",
);
/** The bearer token must not travel in clear text, except to a provider relay on this machine. */
const smsProviderUrl = allOf(
  absoluteUrl,
  matching(
    /^(https:\/\/|http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/])/,
    "must be https (http only to a loopback address)",
  ),
);

/** Where backups go: a path-style S3 URL names the endpoint, the bucket and a key prefix. */
const s3Url = allOf(
  absoluteUrl,
  matching(
    /^(https:\/\/|http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/])[^/]+\/[^/?#]+/,
    "must be https://endpoint/bucket[/prefix] (http only to a loopback address)",
  ),
  matching(/^[^?#]*$/, "must have no query or fragment"),
);

export type Environment = "test" | "live";

export interface Config {
  readonly dev: boolean;
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly baseUrl: string;
  /** When set, a key of the other environment is refused on this host name. */
  readonly testHost: string | null;
  readonly liveHost: string | null;
  readonly databaseUrls: Readonly<Record<Environment, string>>;
  readonly databaseAuthToken: string | null;
  readonly jwtSecret: string | null;
  readonly encryptionKey: string | null;
  /** The key of the audit log's chain and checkpoints (32 bytes, base64); null: ENCRYPTION_KEY's. */
  readonly auditKey: string | null;
  readonly logFormat: "json" | "off";
  /** When set, GET /metrics needs `Authorization: Bearer <token>`; unset, /metrics is open. */
  readonly metricsToken: string | null;
  /** Serve /sandbox/inbox (test-environment messages): on in dev mode, else SANDBOX_INBOX=1. */
  readonly sandboxInbox: boolean;
  readonly limits: Readonly<Record<Exclude<NumericName, "PORT">, number>>;
  readonly notifications: NotificationConfig;
  readonly backup: BackupConfig;
  /**
   * The E-13B font of checks' MICR line, read from the file CHECK_MICR_FONT names once at start;
   * null without one (checks print "not negotiable" and live offers no digital checks).
   */
  readonly checkMicrFont: Uint8Array | null;
}

/** Scheduled backups (BACKUP_INTERVAL_MINUTES and BACKUP_KEEP are in limits). */
export interface BackupConfig {
  /** Where scheduled backups are written: BACKUP_DIR, DATA_DIR/backups by default. */
  readonly dir: string;
  /** A mounted directory each scheduled backup is also copied to. */
  readonly copyDir: string | null;
  /** An S3-compatible target each scheduled backup is also uploaded to. */
  readonly s3: {
    readonly url: string;
    readonly region: string;
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
  } | null;
}

/** How live payee notifications leave the machine (test-environment ones never do). */
export interface NotificationConfig {
  /**
   * The channels live messages are sent on (LIVE_NOTIFICATIONS: on = both, email, sms, off =
   * none); messages on the others stay pending in the outbox.
   */
  readonly channels: readonly ("email" | "sms")[];
  readonly smtp: { readonly url: string; readonly from: string } | null;
  readonly sms: { readonly url: string; readonly token: string } | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parses the environment into a frozen Config, or throws ConfigError naming every bad value.
 * The one file it reads is the MICR font CHECK_MICR_FONT names, so nothing reads it per request.
 * `requireNotificationTransports` is the service's own start: outside dev mode it also needs a
 * transport for every live notification channel, unless LIVE_NOTIFICATIONS=off.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  options: { dev?: boolean; requireNotificationTransports?: boolean } = {},
): Config {
  const problems: string[] = [];
  const dev = options.dev ?? env.SANDBOX_DEV === "1";

  const numbers = {} as Record<NumericName, number>;
  for (const [name, rule] of Object.entries(numericRules) as [NumericName, WholeNumberRule][]) {
    const raw = env[name];
    if (raw === undefined || raw === "") {
      numbers[name] = configDefaults[name];
      continue;
    }
    const parsed = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
    const broken = wholeNumberProblem(parsed, rule);
    if (broken !== null) problems.push(`${name}=${JSON.stringify(raw)}: ${broken}`);
    else numbers[name] = parsed;
  }

  const text = (name: string, rule: TextRule, fallback: string | null) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const broken = rule(raw);
    if (broken !== null) {
      const shown = /SECRET|KEY|TOKEN|SMTP_URL/.test(name)
        ? `(${raw.length} characters)`
        : JSON.stringify(raw);
      problems.push(`${name}=${shown}: ${broken}`);
      return fallback;
    }
    return raw;
  };

  // A transport needs both of its settings; one alone is a mistake named at start.
  const transportPair = <T>(
    [firstName, firstRule]: [string, TextRule],
    [secondName, secondRule]: [string, TextRule],
    build: (first: string, second: string) => T,
  ): T | null => {
    const first = text(firstName, firstRule, null);
    const second = text(secondName, secondRule, null);
    if (first !== null && second !== null) return build(first, second);
    const given = (name: string) => env[name] !== undefined && env[name] !== "";
    if (given(firstName) && !given(secondName)) {
      problems.push(`${secondName} is required with ${firstName}`);
    }
    if (given(secondName) && !given(firstName)) {
      problems.push(`${firstName} is required with ${secondName}`);
    }
    return null;
  };

  const host = text("HOST", anyText, configDefaults.HOST)!;
  if (env.HEADER_TIMEOUT_MS === undefined || env.HEADER_TIMEOUT_MS === "") {
    numbers.HEADER_TIMEOUT_MS = headerTimeoutDefault(host);
  }
  const dataDir = text("DATA_DIR", anyText, configDefaults.DATA_DIR)!;
  const port = numbers.PORT ?? configDefaults.PORT;
  const baseUrl = text(
    "BASE_URL",
    allOf(absoluteUrl, matching(/^https?:/, "must be http(s)")),
    `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`,
  )!.replace(/\/+$/, "");
  const s3Keys = transportPair(
    ["BACKUP_S3_ACCESS_KEY_ID", anyText],
    ["BACKUP_S3_SECRET_ACCESS_KEY", anyText],
    (accessKeyId, secretAccessKey) => ({ accessKeyId, secretAccessKey }),
  );
  const s3Target = text("BACKUP_S3_URL", s3Url, null);
  const s3Region = text(
    "BACKUP_S3_REGION",
    matching(/^[a-z0-9-]+$/, "must be a region name, e.g. us-east-1"),
    "us-east-1",
  )!;
  const given = (name: string) => env[name] !== undefined && env[name] !== "";
  const s3KeysGiven = given("BACKUP_S3_ACCESS_KEY_ID") || given("BACKUP_S3_SECRET_ACCESS_KEY");
  if (given("BACKUP_S3_URL") && !s3KeysGiven) {
    problems.push(
      "BACKUP_S3_ACCESS_KEY_ID and BACKUP_S3_SECRET_ACCESS_KEY are required with BACKUP_S3_URL",
    );
  }
  if (s3KeysGiven && !given("BACKUP_S3_URL")) {
    problems.push("BACKUP_S3_URL is required with BACKUP_S3_ACCESS_KEY_ID");
  }
  const micrFontPath = text("CHECK_MICR_FONT", anyText, null);
  let checkMicrFont: Uint8Array | null = null;
  if (micrFontPath !== null) {
    const font = readSettingFile(micrFontPath);
    if (typeof font === "string") {
      problems.push(`CHECK_MICR_FONT=${JSON.stringify(micrFontPath)}: ${font}`);
    } else checkMicrFont = font;
  }
  const fileUrl = (name: string) => `file:${dataDir.replace(/\/+$/, "")}/${name}.db`;
  const logFormat = text(
    "LOG_FORMAT",
    oneOf(["json", "off"], 'must be "json" or "off"'),
    configDefaults.LOG_FORMAT,
  ) as "json" | "off";

  const config: Config = {
    dev,
    port,
    host,
    dataDir,
    baseUrl,
    testHost: text("TEST_HOST", anyText, null),
    liveHost: text("LIVE_HOST", anyText, null),
    databaseUrls: {
      test: text("DATABASE_URL_TEST", databaseUrl, fileUrl("test"))!,
      live: text("DATABASE_URL_LIVE", databaseUrl, fileUrl("live"))!,
    },
    databaseAuthToken: text("DATABASE_AUTH_TOKEN", anyText, null),
    jwtSecret: text("JWT_SECRET", secret32, null),
    encryptionKey: text("ENCRYPTION_KEY", encryptionKey, null),
    auditKey: text("AUDIT_KEY", encryptionKey, null),
    logFormat,
    metricsToken: text("METRICS_TOKEN", metricsToken, null),
    sandboxInbox: dev || env.SANDBOX_INBOX === "1",
    limits: Object.fromEntries(
      Object.entries(numbers).filter(([name]) => name !== "PORT"),
    ) as Config["limits"],
    notifications: {
      channels: LIVE_CHANNELS[
        text(
          "LIVE_NOTIFICATIONS",
          oneOf(["on", "off", "email", "sms"], 'must be "on", "off", "email" or "sms"'),
          "on",
        )!
      ],
      smtp: transportPair(
        ["SMTP_URL", smtpUrl],
        ["SMTP_FROM", mailbox],
        (url, from) => ({ url, from }),
      ),
      sms: transportPair(
        ["SMS_PROVIDER_URL", smsProviderUrl],
        ["SMS_PROVIDER_TOKEN", anyText],
        (url, token) => ({ url, token }),
      ),
    },
    backup: {
      dir: text("BACKUP_DIR", anyText, `${dataDir.replace(/\/+$/, "")}/backups`)!,
      copyDir: text("BACKUP_COPY_DIR", anyText, null),
      s3: s3Target !== null && s3Keys !== null
        ? {
          url: s3Target.replace(/\/+$/, ""),
          region: s3Region,
          ...s3Keys,
        }
        : null,
    },
    checkMicrFont,
  };

  if (!dev) {
    if (config.jwtSecret === null && env.JWT_SECRET === undefined) {
      problems.push("JWT_SECRET is required outside dev mode (at least 32 bytes)");
    }
    if (config.encryptionKey === null && env.ENCRYPTION_KEY === undefined) {
      problems.push("ENCRYPTION_KEY is required outside dev mode (32 bytes, base64)");
    }
  }
  if (!dev && options.requireNotificationTransports) {
    problems.push(
      ...missingNotificationTransports(config.notifications).map((missing) =>
        `${missing} are required outside dev mode to send live payee notifications ` +
        "(or name the channels you send with LIVE_NOTIFICATIONS=email, sms or off; the others " +
        "stay pending)"
      ),
    );
  }
  if (numbers.HEADER_TIMEOUT_MS > 0 && numbers.HEADER_TIMEOUT_MS < 100) {
    problems.push(
      `HEADER_TIMEOUT_MS=${numbers.HEADER_TIMEOUT_MS}: must be 0 (Deno's own server, behind a proxy) or at least 100`,
    );
  }
  if (numbers.AMOUNT_MIN_CENTS > numbers.AMOUNT_MAX_CENTS) {
    problems.push(
      `AMOUNT_MIN_CENTS=${numbers.AMOUNT_MIN_CENTS}: must not exceed AMOUNT_MAX_CENTS=${numbers.AMOUNT_MAX_CENTS}`,
    );
  }
  if (numbers.AMOUNT_MIN_CENTS > numbers.FUNDING_AMOUNT_MAX_CENTS) {
    problems.push(
      `FUNDING_AMOUNT_MAX_CENTS=${numbers.FUNDING_AMOUNT_MAX_CENTS}: must not be below AMOUNT_MIN_CENTS=${numbers.AMOUNT_MIN_CENTS}`,
    );
  }
  if (numbers.BACKUP_INTERVAL_MINUTES > 0) {
    for (const environment of ["live", "test"] as const) {
      if (!config.databaseUrls[environment].startsWith("file:")) {
        problems.push(
          `BACKUP_INTERVAL_MINUTES=${numbers.BACKUP_INTERVAL_MINUTES}: scheduled backups copy ` +
            `embedded file: databases, and DATABASE_URL_${environment.toUpperCase()} is a libSQL ` +
            "server, whose backups belong to the server (set BACKUP_INTERVAL_MINUTES=0)",
        );
      }
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({
    ...config,
    limits: Object.freeze(config.limits),
    notifications: Object.freeze(config.notifications),
    backup: Object.freeze(config.backup),
  });
}

const LIVE_CHANNELS: Readonly<Record<string, readonly ("email" | "sms")[]>> = {
  on: ["email", "sms"],
  email: ["email"],
  sms: ["sms"],
  off: [],
};

/**
 * HEADER_TIMEOUT_MS when it is not set: 0 (Deno.serve) on a loopback HOST, the guarded listener's
 * 10 s anywhere else. On loopback only a process of this machine can connect, in a deployment the
 * reverse proxy, which reads a request's headers whole before it forwards them, so no slow-header
 * client reaches the service; there Deno.serve answers a cached read at about twice the Node
 * listener's rate (docs/performance.md). A HOST other clients can reach keeps the header timeout
 * and the connection limits.
 */
export function headerTimeoutDefault(host: string): number {
  const loopback = host === "localhost" || host === "::1" || host === "[::1]" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  return loopback ? 0 : configDefaults.HEADER_TIMEOUT_MS;
}

/** The settings of each channel live messages are sent on that has no transport. */
export function missingNotificationTransports(notifications: NotificationConfig): string[] {
  const sends = (channel: "email" | "sms") => notifications.channels.includes(channel);
  return [
    ...(sends("email") && !notifications.smtp ? ["SMTP_URL and SMTP_FROM (e-mail)"] : []),
    ...(sends("sms") && !notifications.sms
      ? ["SMS_PROVIDER_URL and SMS_PROVIDER_TOKEN (SMS)"]
      : []),
  ];
}

/** The bytes of the file a path setting names, or what is wrong with it. */
function readSettingFile(path: string): Uint8Array | string {
  try {
    if (!Deno.statSync(path).isFile) return "must name a file, not a directory or device";
    return Deno.readFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "must name an existing file";
    return `must name a readable file (${error instanceof Error ? error.message : error})`;
  }
}

/** What is wrong with a numeric setting's value (NaN when it was not digits), or null. */
function wholeNumberProblem(value: number, rule: WholeNumberRule): string | null {
  if (!Number.isInteger(value)) return "must be a whole number";
  if (value < rule.min) return `must be at least ${rule.min}`;
  if (rule.max !== undefined && value > rule.max) return `must be at most ${rule.max}`;
  return null;
}
