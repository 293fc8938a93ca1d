/**
 * Operator CLI: `deno task admin <command> [--flag value …] [--json]`. When no service holds
 * DATA_DIR it opens the databases itself; otherwise it sends the command to the running
 * service's loopback admin endpoint. It never creates a database: a DATA_DIR without them is
 * refused, naming where it looked (commands that need none, like help, still run). The operator's session token (from `login`) is kept in
 * DATA_DIR/operator-session (mode 0600) and sent with every command; passwords and TOTP codes are
 * prompted (hidden on a terminal, else read line by line from stdin), never flags. Exit codes:
 * 0 done, 1 refused, 2 bad usage or input.
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
import { needsDatabases, type Prompt } from "../lib/admin/command_kit.ts";
import { DatabaseStartError, openEnvironmentDatabases } from "../db/client.ts";
import {
  acquireWriterLock,
  missingDatabaseFiles,
  readAdminToken,
  readServiceFile,
} from "../db/data_dir.ts";
import { loadOrCreateDevSecrets } from "../db/dev_secrets.ts";
import { type Config, ConfigError, loadConfig } from "../lib/platform/config.ts";
import { runtimeSettingsOf } from "../lib/payouts/runtime.ts";
import { SecretBox } from "../lib/platform/crypto.ts";
import type { Result } from "../lib/platform/result.ts";

/** The header the admin endpoint reads the session from (routes/admin.ts). */
const OPERATOR_SESSION_HEADER = "X-Operator-Session";
/** A prompted line longer than this is refused (a password is at most 256 characters). */
const PROMPT_LINE_BYTES_MAX = 4096;

interface Invocation {
  readonly command: string | undefined;
  readonly flags: Record<string, string>;
  readonly json: boolean;
}

function parseArguments(args: readonly string[]): Invocation | string {
  const flags: Record<string, string> = {};
  let json = false;
  let command: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--json") json = true;
    else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
      const value = eq > 0 ? arg.slice(eq + 1) : switchFlags.has(name) ? "true" : args[++i];
      if (value === undefined) return `--${name} needs a value`;
      flags[name] = value;
    } else if (command === undefined) command = arg;
    else return `unexpected argument ${JSON.stringify(arg)}`;
  }
  return { command, flags, json };
}

const sessionFile = (config: Config) => `${config.dataDir}/operator-session`;

async function readSessionToken(config: Config): Promise<string | null> {
  try {
    return (await Deno.readTextFile(sessionFile(config))).trim() || null;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** Keeps the session token for the next commands, readable by this user only. */
async function writeSessionToken(config: Config, token: string): Promise<void> {
  const path = sessionFile(config);
  await Deno.writeTextFile(path, token + "\n", { mode: 0o600 });
  await Deno.chmod(path, 0o600);
}

async function removeSessionToken(config: Config): Promise<void> {
  await Deno.remove(sessionFile(config)).catch((error) => {
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

/** The key that seals secrets (TOTP secrets, approvals): dev mode's generated one, or ENCRYPTION_KEY. */
async function secretBoxOf(config: Config): Promise<SecretBox> {
  const key = config.encryptionKey ??
    (config.dev ? (await loadOrCreateDevSecrets(config.dataDir)).encryptionKey : null);
  if (key === null) throw new ConfigError(["ENCRYPTION_KEY is required outside dev mode"]);
  return await SecretBox.fromBase64Key(key);
}

async function runLocally(
  config: Config,
  name: string,
  flags: Record<string, string>,
  session: { token: string | null; input: Record<string, string> },
) {
  const secretBox = await secretBoxOf(config);
  const databases = await openEnvironmentDatabases(config);
  try {
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
  const invocation = parseArguments(Deno.args);
  if (typeof invocation === "string") {
    console.error(`${invocation}\n\n${adminHelp()}`);
    return 2;
  }
  const { command, flags, json } = invocation;
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

  let config: Config;
  try {
    const env = Deno.env.toObject();
    config = loadConfig(env, {
      dev: env.JWT_SECRET === undefined || env.ENCRYPTION_KEY === undefined,
    });
  } catch (error) {
    if (error instanceof ConfigError) return fail("invalid_configuration", error.message, 2);
    throw error;
  }
  if (!needsDatabases(checked.value)) {
    const input = await readPrompts(promptsOf(command));
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
  // With libSQL server URLs, DATA_DIR holds only the lock and the session file.
  await Deno.mkdir(config.dataDir, { recursive: true });
  const input = await readPrompts(promptsOf(command));
  if (typeof input === "string") return fail("usage", input, 2);
  const session = { token: await readSessionToken(config), input };
  const lock = await acquireWriterLock(config.dataDir);
  let outcome: { result: Result<Record<string, unknown>>; usage: boolean };
  if (lock.ok) {
    try {
      const result = await runLocally(config, command, flags, session);
      outcome = { result, usage: !result.ok && isInputRefusal(result.code) };
    } catch (error) {
      // A libSQL server that cannot be used is refused as the service refuses it at start.
      if (!(error instanceof DatabaseStartError)) throw error;
      return fail("database_unusable", error.message, 1);
    } finally {
      await lock.value.release();
    }
  } else {
    outcome = await runThroughService(config, command, flags, session);
  }
  if (command === "logout") await removeSessionToken(config);
  if (!outcome.result.ok) {
    const usage = outcome.usage || isInputRefusal(outcome.result.code);
    return fail(outcome.result.code, outcome.result.message, usage ? 2 : 1);
  }
  const value = outcome.result.value;
  if (command === "login" && typeof value.session_token === "string") {
    // The token goes to the session file only, never to the screen.
    const { session_token: token, ...shown } = value;
    await writeSessionToken(config, token);
    print(json, { ...shown, session_file: sessionFile(config) });
    return 0;
  }
  print(json, value);
  return 0;
}

if (import.meta.main) Deno.exit(await main());
