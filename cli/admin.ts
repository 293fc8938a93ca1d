/**
 * Operator CLI: `deno task admin <command> [--flag value …] [--json] [--as EMAIL]`. When no
 * service holds DATA_DIR it opens the databases itself; otherwise it sends the command to the
 * running service's loopback admin endpoint. It never creates a database: a DATA_DIR without them
 * is refused, naming where it looked (commands that need none, like help, still run). Dev mode is
 * a property of DATA_DIR (`deno task dev` marks the directory it creates), never inferred from
 * missing variables: elsewhere a command on the databases needs JWT_SECRET and ENCRYPTION_KEY and
 * the CLI writes no secrets file. Each operator's session token (from `login`) is kept in
 * DATA_DIR/operator-sessions/<e-mail> (mode 0600), so several operators can work from one host
 * (`--as EMAIL` chooses one when several are signed in); passwords and TOTP codes are prompted
 * (hidden on a terminal, else read line by line from stdin), never flags. Exit codes: 0 done,
 * 1 refused, 2 bad usage or input.
 */
import { resolve } from "node:path";
import {
  adminHelp,
  checkInvocation,
  isInputRefusal,
  promptsOf,
  runAdminCommand,
  runWithoutDatabases,
  switchFlags,
} from "../lib/admin/commands.ts";
import { absolutePathFlags, needsDatabases, type Prompt } from "../lib/admin/command_kit.ts";
import { DatabaseStartError, openEnvironmentDatabases } from "../db/client.ts";
import {
  acquireWriterLock,
  missingDatabaseFiles,
  readAdminToken,
  readServiceFile,
} from "../db/data_dir.ts";
import { isDevDataDir, readDevSecrets } from "../db/dev_secrets.ts";
import { type Config, ConfigError, loadConfig } from "../lib/platform/config.ts";
import { runtimeSettingsOf } from "../lib/payouts/settings.ts";
import { SecretBox } from "../lib/platform/crypto.ts";
import { auditKeysFrom, useAuditKeys } from "../lib/audit/anchor.ts";
import { keyLegacyAuditChains } from "../lib/audit/service.ts";
import type { Result } from "../lib/platform/result.ts";

/** The header the admin endpoint reads the session from (routes/admin.ts). */
const OPERATOR_SESSION_HEADER = "X-Operator-Session";
/** A prompted line longer than this is refused (a password is at most 256 characters). */
const PROMPT_LINE_BYTES_MAX = 4096;

interface Invocation {
  readonly command: string | undefined;
  readonly flags: Record<string, string>;
  readonly json: boolean;
  /** The operator whose session to use (`--as EMAIL`), when several are signed in here. */
  readonly as: string | undefined;
}

function parseArguments(args: readonly string[]): Invocation | string {
  const flags: Record<string, string> = {};
  let json = false;
  let as: string | undefined;
  let command: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--json") json = true;
    else if (arg === "--as" || arg.startsWith("--as=")) {
      as = arg === "--as" ? args[++i] : arg.slice("--as=".length);
      if (as === undefined || as === "") return "--as needs an operator's e-mail";
    } else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
      const value = eq > 0 ? arg.slice(eq + 1) : switchFlags.has(name) ? "true" : args[++i];
      if (value === undefined) return `--${name} needs a value`;
      flags[name] = value;
    } else if (command === undefined) command = arg;
    else return `unexpected argument ${JSON.stringify(arg)}`;
  }
  return { command, flags, json, as };
}

/** Where each operator's session token is kept: one file per operator. */
const sessionDirectory = (config: Config) => `${config.dataDir}/operator-sessions`;
const sessionFile = (config: Config, email: string) =>
  `${sessionDirectory(config)}/${encodeURIComponent(email.trim().toLowerCase())}`;

/** The e-mails of the operators with a session file here. */
async function signedInHere(config: Config): Promise<string[]> {
  const emails: string[] = [];
  try {
    for await (const entry of Deno.readDir(sessionDirectory(config))) {
      if (entry.isFile) emails.push(decodeURIComponent(entry.name));
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return emails.sort();
}

/**
 * The session file of the operator `--as` names, else of the one operator signed in here; null
 * when nobody is. Several signed in without `--as` is a usage error naming them.
 */
async function chosenSessionFile(config: Config, as: string | undefined): Promise<string | null> {
  if (as !== undefined) return sessionFile(config, as);
  const emails = await signedInHere(config);
  if (emails.length > 1) {
    throw new UsageError(
      `several operators are signed in on this host (${
        emails.join(", ")
      }): choose one with --as EMAIL`,
    );
  }
  return emails.length === 1 ? sessionFile(config, emails[0]) : null;
}

class UsageError extends Error {}

async function readSessionToken(path: string | null): Promise<string | null> {
  if (path === null) return null;
  try {
    return (await Deno.readTextFile(path)).trim() || null;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** Keeps an operator's session token for their next commands, readable by this user only. */
async function writeSessionToken(config: Config, email: string, token: string): Promise<string> {
  await Deno.mkdir(sessionDirectory(config), { recursive: true, mode: 0o700 });
  const path = sessionFile(config, email);
  await Deno.writeTextFile(path, token + "\n", { mode: 0o600 });
  await Deno.chmod(path, 0o600);
  return path;
}

async function removeSessionToken(path: string | null): Promise<void> {
  if (path === null) return;
  await Deno.remove(path).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
}

/** Reads stdin a line at a time, without echo for a secret on a terminal. */
class LineReader {
  #buffered: number[] = [];
  #ended = false;

  async line(secret: boolean): Promise<string | null> {
    const terminal = Deno.stdin.isTerminal();
    if (terminal && secret) Deno.stdin.setRaw(true);
    try {
      const bytes: number[] = [];
      for (;;) {
        if (this.#buffered.length === 0) {
          if (this.#ended) return bytes.length > 0 ? this.#decode(bytes) : null;
          const chunk = new Uint8Array(256);
          const read = await Deno.stdin.read(chunk);
          if (read === null) this.#ended = true;
          else this.#buffered.push(...chunk.subarray(0, read));
          continue;
        }
        const byte = this.#buffered.shift()!;
        if (byte === 0x0a || (byte === 0x0d && terminal)) return this.#decode(bytes);
        if (byte === 0x0d) continue;
        if (terminal && secret && byte === 0x03) {
          Deno.stdin.setRaw(false);
          Deno.exit(130);
        }
        if (terminal && secret && (byte === 0x7f || byte === 0x08)) {
          bytes.pop();
          continue;
        }
        if (bytes.length >= PROMPT_LINE_BYTES_MAX) throw new Error("the line is too long");
        bytes.push(byte);
      }
    } finally {
      if (terminal && secret) {
        Deno.stdin.setRaw(false);
        console.error("");
      }
    }
  }

  #decode(bytes: number[]): string {
    return new TextDecoder().decode(new Uint8Array(bytes));
  }
}

/** The values a command prompts for, or the message of what is missing. */
async function readPrompts(prompts: readonly Prompt[]): Promise<Record<string, string> | string> {
  const input: Record<string, string> = {};
  const reader = new LineReader();
  for (const prompt of prompts) {
    if (Deno.stdin.isTerminal()) {
      await Deno.stderr.write(new TextEncoder().encode(`${prompt.label}: `));
    }
    const value = (await reader.line(prompt.secret)) ?? "";
    if (value === "" && !prompt.optional) {
      return `${prompt.label} is required (prompted; on stdin, one value per line)`;
    }
    input[prompt.name] = prompt.secret ? value : value.trim();
  }
  return input;
}

/**
 * The key that seals secrets (TOTP secrets, approvals): ENCRYPTION_KEY, or in a dev-mode data
 * directory the one `deno task dev` generated there. The CLI never generates one.
 */
async function sealingKeyOf(config: Config): Promise<string> {
  const key = config.encryptionKey ??
    (config.dev ? (await readDevSecrets(config.dataDir))?.encryptionKey ?? null : null);
  if (key === null) {
    throw new ConfigError([
      config.dev
        ? `${config.dataDir} is a dev-mode data directory without its secrets.json: start \`deno task dev\` once, or set ENCRYPTION_KEY`
        : "ENCRYPTION_KEY is required outside dev mode (32 bytes, base64)",
    ]);
  }
  return key;
}

async function runLocally(
  config: Config,
  secretBox: SecretBox,
  name: string,
  flags: Record<string, string>,
  session: { token: string | null; input: Record<string, string> },
) {
  const databases = await openEnvironmentDatabases(config);
  try {
    // The first run with the key on a log chained before it had one marks it keyed.
    await keyLegacyAuditChains(databases, "cli", Date.now());
    return await runAdminCommand(
      {
        databases,
        now: Date.now(),
        keyGraceSeconds: config.limits.KEY_GRACE_SECONDS,
        secretBox,
        runtimeSettings: runtimeSettingsOf(config),
        dev: config.dev,
        origin: "cli",
        sessionToken: session.token,
        input: session.input,
      },
      name,
      flags,
    );
  } finally {
    await databases.test.close();
    await databases.live.close();
  }
}

async function runThroughService(
  config: Config,
  name: string,
  flags: Record<string, string>,
  session: { token: string | null; input: Record<string, string> },
): Promise<{ result: Result<Record<string, unknown>>; usage: boolean }> {
  const service = await readServiceFile(config.dataDir);
  const token = await readAdminToken(config.dataDir);
  const response = await fetch(`${service.admin_url}/commands/${encodeURIComponent(name)}`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      ...(session.token === null ? {} : { [OPERATOR_SESSION_HEADER]: session.token }),
    },
    body: JSON.stringify({ flags, input: session.input }),
  });
  const body = await response.json() as {
    result?: Record<string, unknown>;
    error?: { code: string; message: string };
  };
  if (response.ok && body.result) return { result: { ok: true, value: body.result }, usage: false };
  const error = body.error ??
    { code: "admin_endpoint_failed", message: `the service answered ${response.status}` };
  return {
    result: { ok: false, code: error.code, message: error.message },
    usage: response.status === 400,
  };
}

/** Where the CLI looked for databases, and how to point it at the service's. */
function noDatabasesMessage(config: Config, missing: readonly string[], command: string): string {
  return `no databases in ${resolve(config.dataDir)}: ${missing.join(" and ")} ${
    missing.length === 1 ? "does" : "do"
  } not exist, and the CLI never creates a database. Point DATA_DIR at the service's data ` +
    `directory: DATA_DIR=/path/to/data deno task admin ${command}`;
}

function print(json: boolean, value: Record<string, unknown>): void {
  if (json) return console.log(JSON.stringify(value));
  // A report rendered as CSV prints as is, ready to redirect to a file; the environment it was
  // read from goes to the terminal beside it.
  if (typeof value.csv === "string") {
    const { csv, ...rest } = value;
    console.log(csv.trimEnd());
    for (const [key, item] of Object.entries(rest)) console.error(`${key}: ${item}`);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    console.log(`${key}: ${typeof item === "object" ? JSON.stringify(item, null, 2) : item}`);
  }
}

async function main(): Promise<number> {
  // What the CLI creates (a restored data directory, backups, sessions) is its user's alone.
  Deno.umask(0o077);
  const invocation = parseArguments(Deno.args);
  if (typeof invocation === "string") {
    console.error(`${invocation}\n\n${adminHelp()}`);
    return 2;
  }
  const { command, flags, json, as } = invocation;
  if (command === undefined || command === "help" || flags.help !== undefined) {
    (command === undefined ? console.error : console.log)(adminHelp());
    return command === undefined ? 2 : 0;
  }
  const checked = checkInvocation(command, flags);
  const fail = (code: string, message: string, exitCode: number) => {
    console.error(json ? JSON.stringify({ error: { code, message } }) : `error: ${message}`);
    return exitCode;
  };
  if (!checked.ok) return fail(checked.code, checked.message, 2);

  const env = Deno.env.toObject();
  let config: Config;
  try {
    // Where DATA_DIR is, read before it says whether it is a dev-mode sandbox.
    config = loadConfig(env, { dev: true });
    config = { ...config, dev: await isDevDataDir(config.dataDir) };
  } catch (error) {
    if (error instanceof ConfigError) return fail("invalid_configuration", error.message, 2);
    throw error;
  }
  if (!needsDatabases(checked.value)) {
    // secrets:generate, migrate and restore run without keys: the first is how they are made.
    const input = await readPrompts(promptsOf(command, flags));
    if (typeof input === "string") return fail("usage", input, 2);
    const result = await runWithoutDatabases(
      {
        now: Date.now(),
        keyGraceSeconds: config.limits.KEY_GRACE_SECONDS,
        databaseSettings: {
          urls: config.databaseUrls,
          authToken: config.databaseAuthToken,
          busyTimeoutMs: config.limits.DB_BUSY_TIMEOUT_MS,
        },
        dev: config.dev,
        origin: "cli",
        sessionToken: null,
        input,
      },
      command,
      flags,
    );
    if (!result.ok) return fail(result.code, result.message, isInputRefusal(result.code) ? 2 : 1);
    print(json, result.value);
    return 0;
  }
  // Opening a database that is not there would create it, empty, and the command would answer
  // from it as if it were the service's: an operator in the wrong directory must be told instead.
  const missing = await missingDatabaseFiles(config.databaseUrls);
  if (missing.length > 0) {
    return fail("databases_not_found", noDatabasesMessage(config, missing, command), 1);
  }
  if (!config.dev) {
    // A production data directory: its keys come from the environment, each named when missing.
    try {
      config = loadConfig(env, { dev: false });
    } catch (error) {
      if (error instanceof ConfigError) return fail("invalid_configuration", error.message, 2);
      throw error;
    }
  }
  // With libSQL server URLs, DATA_DIR holds only the lock and the session file.
  await Deno.mkdir(config.dataDir, { recursive: true });
  const input = await readPrompts(promptsOf(command, flags));
  if (typeof input === "string") return fail("usage", input, 2);
  let sessionPath: string | null;
  let secretBox: SecretBox;
  try {
    sessionPath = await chosenSessionFile(config, as);
    const sealingKey = await sealingKeyOf(config);
    secretBox = await SecretBox.fromBase64Key(sealingKey);
    // The audit chain's key, as the service derives it.
    useAuditKeys(auditKeysFrom(config.auditKey ?? sealingKey));
  } catch (error) {
    if (error instanceof UsageError) return fail("usage", error.message, 2);
    if (error instanceof ConfigError) return fail("invalid_configuration", error.message, 2);
    throw error;
  }
  const session = { token: await readSessionToken(sessionPath), input };
  const lock = await acquireWriterLock(config.dataDir);
  let outcome: { result: Result<Record<string, unknown>>; usage: boolean };
  if (lock.ok) {
    try {
      const result = await runLocally(config, secretBox, command, flags, session);
      outcome = { result, usage: !result.ok && isInputRefusal(result.code) };
    } catch (error) {
      // A libSQL server that cannot be used is refused as the service refuses it at start.
      if (!(error instanceof DatabaseStartError)) throw error;
      return fail("database_unusable", error.message, 1);
    } finally {
      await lock.value.release();
    }
  } else {
    // The service opens path flags itself: a relative one must mean this shell's directory.
    const absolute = absolutePathFlags(checked.value, flags, Deno.cwd());
    outcome = await runThroughService(config, command, absolute, session);
  }
  if (command === "logout") await removeSessionToken(sessionPath);
  if (!outcome.result.ok) {
    const usage = outcome.usage || isInputRefusal(outcome.result.code);
    return fail(outcome.result.code, outcome.result.message, usage ? 2 : 1);
  }
  const value = outcome.result.value;
  if (command === "login" && typeof value.session_token === "string") {
    // The token goes to the session file only, never to the screen.
    const { session_token: token, ...shown } = value;
    const path = await writeSessionToken(config, String(value.email), token);
    print(json, { ...shown, session_file: path });
    return 0;
  }
  print(json, value);
  return 0;
}

if (import.meta.main) Deno.exit(await main());
