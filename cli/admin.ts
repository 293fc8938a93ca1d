/**
 * Operator CLI: `deno task admin <command> [--flag value …] [--json]`. When no service holds
 * DATA_DIR it opens the databases itself; otherwise it sends the command to the running
 * service's loopback admin endpoint. Exit codes: 0 done, 1 refused, 2 bad usage or input.
 */
import { adminHelp, checkInvocation, runAdminCommand, switchFlags } from "../lib/admin/commands.ts";
import { openEnvironmentDatabases } from "../db/client.ts";
import { acquireWriterLock, readAdminToken, readServiceFile } from "../db/data_dir.ts";
import { type Config, ConfigError, loadConfig } from "../lib/platform/config.ts";
import type { Result } from "../lib/platform/result.ts";

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

async function runLocally(config: Config, name: string, flags: Record<string, string>) {
  const databases = await openEnvironmentDatabases(config);
  try {
    return await runAdminCommand(
      { databases, now: Date.now(), keyGraceSeconds: config.limits.KEY_GRACE_SECONDS },
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
): Promise<{ result: Result<Record<string, unknown>>; usage: boolean }> {
  const service = await readServiceFile(config.dataDir);
  const token = await readAdminToken(config.dataDir);
  const response = await fetch(`${service.admin_url}/commands/${encodeURIComponent(name)}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ flags }),
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

function print(json: boolean, value: Record<string, unknown>): void {
  if (json) return console.log(JSON.stringify(value));
  // A report rendered as CSV prints as is, ready to redirect to a file.
  if (typeof value.csv === "string" && Object.keys(value).length === 1) {
    return console.log(value.csv.trimEnd());
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
  await Deno.mkdir(config.dataDir, { recursive: true });
  const lock = await acquireWriterLock(config.dataDir);
  let outcome: { result: Result<Record<string, unknown>>; usage: boolean };
  if (lock.ok) {
    try {
      const result = await runLocally(config, command, flags);
      outcome = { result, usage: !result.ok && result.code === "invalid_input" };
    } finally {
      await lock.value.release();
    }
  } else {
    outcome = await runThroughService(config, command, flags);
  }
  if (!outcome.result.ok) {
    const usage = outcome.usage || outcome.result.code === "invalid_input";
    return fail(outcome.result.code, outcome.result.message, usage ? 2 : 1);
  }
  print(json, outcome.result.value);
  return 0;
}

if (import.meta.main) Deno.exit(await main());
