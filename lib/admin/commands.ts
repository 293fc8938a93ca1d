/**
 * The operator commands, in one table: the CLI and the loopback admin endpoint both parse flags
 * and print help from it, so the two can never disagree.
 */
import * as v from "valibot";
import type { Environment } from "../platform/config.ts";
import { tieOutCsv } from "../ledger/tieout.ts";
import { formatDollars, parseDollars } from "../platform/money.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { findEventById, queueDeliveries } from "../webhooks/event_store.ts";
import { receiveWire, returnAchFunding } from "../funding/store.ts";
import {
  addMembership,
  createCompany,
  createLine,
  createUser,
  type Databases,
  listCompanies,
  revokeKey,
  rotateKey,
  setFees,
} from "../identity/admin.ts";
import { lineTieOut, verifyLedger } from "../ledger/reports.ts";
import { listScheduledJobs, retryAllParkedJobs, retryParkedJob } from "./jobs.ts";

export interface CommandContext {
  readonly databases: Databases;
  readonly now: number;
  readonly keyGraceSeconds: number;
}

type Flags = Record<string, string>;

interface Command {
  readonly summary: string;
  readonly flags: Readonly<Record<string, string>>;
  readonly run: (ctx: CommandContext, flags: Flags) => Promise<Result<Record<string, unknown>>>;
}

function environmentFlag(
  flags: Flags,
  fallback: Environment,
): Result<Environment, "invalid_input"> {
  const value = flags.environment ?? fallback;
  if (value === "test" || value === "live") return ok(value);
  return refuse("invalid_input", `--environment ${JSON.stringify(value)}: test or live`, {
    field: "environment",
  });
}

/** The line of a company named by TIN and line code. */
async function findLineByCode(
  ctx: CommandContext,
  environment: Environment,
  tin: string,
  code: string,
): Promise<Result<{ lineId: string; companyId: string }, "line_not_found">> {
  const { rows } = await ctx.databases[environment].readClient.execute({
    sql: `SELECT l.id, l.company_id FROM business_lines l JOIN companies c ON c.id = l.company_id
          WHERE c.tin = ? AND l.code = ?`,
    args: [tin, code],
  });
  if (!rows[0]) {
    return refuse("line_not_found", `no line ${JSON.stringify(code)} for TIN ${tin}`, {
      field: "line",
    });
  }
  return ok({ lineId: String(rows[0].id), companyId: String(rows[0].company_id) });
}

/** An operator's record of what the bank did with one funding. */
function fundingCommand(
  summary: string,
  action: typeof receiveWire,
): Command {
  return {
    summary,
    flags: { funding: "the funding id (fund_…)", environment: "live (default) or test" },
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const done = await ctx.databases[environment.value].writer.write(
        async (tx): ReturnType<typeof action> => {
          const moved = await action(tx, f.funding, ctx.now);
          return moved.ok ? moved : tx.abort(moved);
        },
      );
      return done.ok ? ok({ funding_id: done.value.id, status: done.value.status }) : done;
    },
  };
}

/** A fee above the largest payout ($1,000,000.00) is a typing mistake, not a price. */
const FEE_MAX_CENTS = 100_000_000;

function feeFlag(flags: Flags, name: string): Result<number, "invalid_input"> {
  const raw = flags[name] ?? "0";
  const cents = parseDollars(raw, { minCents: 0, maxCents: FEE_MAX_CENTS });
  if (!cents.ok) {
    return refuse(
      "invalid_input",
      `--${name} ${JSON.stringify(raw)}: dollars with at most two decimals, e.g. 1.50, up to ${
        formatDollars(FEE_MAX_CENTS)
      }`,
      { field: name },
    );
  }
  return ok(cents.value);
}

export const adminCommands: Readonly<Record<string, Command>> = {
  "company:create": {
    summary: "create a company and print its CompanyApiKey (shown once)",
    flags: { name: "company name", tin: "9-digit TIN" },
    run: async (ctx, f) => {
      const r = await createCompany(ctx.databases, { name: f.name, tin: f.tin }, ctx.now);
      return r.ok ? ok({ ...r.value.company, company_api_key: r.value.companyApiKey }) : r;
    },
  },
  "user:create": {
    summary: "create a user with a test and a live key (shown once)",
    flags: { email: "e-mail address" },
    run: async (ctx, f) => {
      const r = await createUser(ctx.databases, { email: f.email }, ctx.now);
      return r.ok
        ? ok({
          ...r.value.user,
          api_key_test: r.value.apiKeyTest,
          api_key_live: r.value.apiKeyLive,
        })
        : r;
    },
  },
  "user:add": {
    summary: "add a user to a company",
    flags: { email: "the user's e-mail", tin: "the company's TIN" },
    run: async (ctx, f) => {
      const r = await addMembership(ctx.databases, { email: f.email, tin: f.tin }, ctx.now);
      return r.ok
        ? ok({ user: r.value.user.email, company: r.value.company.name, tin: r.value.company.tin })
        : r;
    },
  },
  "line:create": {
    summary: "create a business line with a test and a live key (shown once)",
    flags: { tin: "the company's TIN", code: "line code, e.g. auto" },
    run: async (ctx, f) => {
      const r = await createLine(ctx.databases, { tin: f.tin, code: f.code }, ctx.now);
      return r.ok
        ? ok({
          ...r.value.line,
          company: r.value.company.name,
          key_test: r.value.keyTest,
          key_live: r.value.keyLive,
        })
        : r;
    },
  },
  "key:rotate": {
    summary: "replace a key (secret or key id); the old one works for 24 more hours",
    flags: { key: "the key's secret or id" },
    run: async (ctx, f) => {
      const r = await rotateKey(ctx.databases, { key: f.key }, {
        now: ctx.now,
        graceSeconds: ctx.keyGraceSeconds,
      });
      return r.ok
        ? ok({
          key_id: r.value.keyId,
          secret: r.value.secret,
          previous_key_id: r.value.previousKeyId,
          previous_key_expires_at: new Date(r.value.previousExpiresAt).toISOString(),
        })
        : r;
    },
  },
  "key:revoke": {
    summary: "stop a key at once",
    flags: { key: "the key's secret or id" },
    run: async (ctx, f) => {
      const r = await revokeKey(ctx.databases, { key: f.key }, ctx.now);
      return r.ok
        ? ok({ key_id: r.value.keyId, revoked_at: new Date(r.value.revokedAt).toISOString() })
        : r;
    },
  },
  "company:list": {
    summary: "list companies with their lines and users",
    flags: {},
    run: async (ctx) => ok({ companies: await listCompanies(ctx.databases) }),
  },
  "fees:set": {
    summary: "set a company's fees for one payment method (dollars)",
    flags: {
      tin: "the company's TIN",
      method: "payment method id 1-7",
      payor: "payor fee, e.g. 1.50",
      payee: "payee fee",
      service: "service fee",
    },
    run: async (ctx, f) => {
      const fees = [feeFlag(f, "payor"), feeFlag(f, "payee"), feeFlag(f, "service")];
      for (const fee of fees) if (!fee.ok) return fee;
      const [payor, payee, service] = fees.map((fee) => (fee as { value: number }).value);
      const method = /^\d+$/.test(f.method ?? "") ? Number(f.method) : f.method;
      const r = await setFees(ctx.databases, {
        tin: f.tin,
        paymentMethodId: method,
        payorFeeCents: payor,
        payeeFeeCents: payee,
        serviceFeeCents: service,
      });
      return r.ok
        ? ok({
          company: r.value.company.name,
          payment_method_id: r.value.paymentMethodId,
          payor_fee_cents: payor,
          payee_fee_cents: payee,
          service_fee_cents: service,
        })
        : r;
    },
  },
  "retry:set": {
    summary: "set a company's automatic retry policy (both environments)",
    flags: {
      tin: "the company's TIN",
      max: "retries per payout, 0-10",
      reasons: "comma-separated failure reasons",
    },
    run: async (ctx, f) => {
      if (!/^(10|\d)$/.test(f.max)) {
        return refuse(
          "invalid_input",
          `--max ${JSON.stringify(f.max)}: a whole number from 0 to 10`,
          { field: "max" },
        );
      }
      const reasons = f.reasons.split(",").map((r) => r.trim()).filter((r) => r !== "");
      if (reasons.some((r) => !/^[A-Za-z0-9_]{1,40}$/.test(r))) {
        return refuse(
          "invalid_input",
          `--reasons ${JSON.stringify(f.reasons)}: names of letters, digits and _`,
          {
            field: "reasons",
          },
        );
      }
      for (const database of [ctx.databases.live, ctx.databases.test]) {
        const updated = await database.writer.write((tx) =>
          tx.execute({
            sql: "UPDATE companies SET retry_max = ?, retry_reasons = ? WHERE tin = ?",
            args: [Number(f.max), JSON.stringify(reasons), f.tin],
          })
        );
        if (updated.rowsAffected === 0) {
          return refuse("company_not_found", `no company with TIN ${f.tin}`);
        }
      }
      return ok({ tin: f.tin, retry_max: Number(f.max), retry_reasons: reasons });
    },
  },
  "wire:receive": fundingCommand(
    "record that a pending wire arrived: its amount becomes available",
    receiveWire,
  ),
  "funding:return": fundingCommand(
    "record that the bank returned a pending ACH funding",
    returnAchFunding,
  ),
  "event:replay": {
    summary: "deliver an event again to every endpoint that receives it (both surfaces)",
    flags: { event: "the event id (evt_…)", environment: "live (default) or test" },
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const database = ctx.databases[environment.value];
      const event = await findEventById(database.readClient, f.event);
      if (!event) {
        return refuse("event_not_found", `no event ${f.event} in ${environment.value}`, {
          field: "event",
        });
      }
      const deliveries = await database.writer.write((tx) =>
        queueDeliveries(tx, event, { manual: true, surfaces: "all" }, ctx.now)
      );
      return ok({ event_id: event.id, deliveries });
    },
  },
  "jobs:list": {
    summary: "list pending scheduled jobs, earliest due first, or with --parked the parked ones",
    flags: {
      parked: "list the parked jobs (failed for good, waiting for an operator)",
      environment: "live (default) or test",
    },
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const parked = f.parked !== undefined;
      const listed = await listScheduledJobs(ctx.databases[environment.value], parked);
      return ok({
        environment: environment.value,
        parked,
        jobs: listed.jobs,
        has_more: listed.hasMore,
      });
    },
  },
  "jobs:retry": {
    summary: "put a parked job (or every one) back in the queue, due now",
    flags: {
      job: "the parked job's id (job_…)",
      "all-parked": "re-queue every parked job",
      environment: "live (default) or test",
    },
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const all = f["all-parked"] !== undefined;
      if ((f.job === undefined) === !all) {
        return refuse("invalid_input", "jobs:retry takes either --job <id> or --all-parked", {
          field: "job",
        });
      }
      const database = ctx.databases[environment.value];
      const retried = all
        ? ok(await retryAllParkedJobs(database, ctx.now))
        : await retryParkedJob(database, f.job, ctx.now);
      return retried.ok
        ? ok({ environment: environment.value, requeued: retried.value.requeued })
        : retried;
    },
  },
  "ledger:verify": {
    summary: "recompute every balance and transaction from the entries; exit 1 on any difference",
    flags: { environment: "test or live (default: both)" },
    run: async (ctx, f) => {
      const environments: Environment[] = f.environment === undefined ? ["live", "test"] : [];
      if (f.environment !== undefined) {
        const one = environmentFlag(f, "live");
        if (!one.ok) return one;
        environments.push(one.value);
      }
      const report: Record<string, unknown> = {};
      let problems = 0;
      for (const environment of environments) {
        const found = await verifyLedger(ctx.databases[environment].readClient);
        problems += found.length;
        report[environment] = found;
      }
      if (problems > 0) {
        return refuse(
          "ledger_differences",
          `${problems} ledger differences found: ${JSON.stringify(report)}`,
          {
            details: report,
          },
        );
      }
      return ok({ ...Object.fromEntries(environments.map((e) => [e, "balanced"])) });
    },
  },
  "tieout": {
    summary: "a line's daily tie-out (UTC day) as JSON, or CSV with --format csv",
    flags: {
      tin: "the company's TIN",
      line: "line code",
      date: "YYYY-MM-DD",
      environment: "live (default) or test",
      format: "json (default) or csv",
    },
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const line = await findLineByCode(ctx, environment.value, f.tin, f.line);
      if (!line.ok) return line;
      const tieOut = await lineTieOut(
        ctx.databases[environment.value].readClient,
        line.value.lineId,
        f.date,
      );
      if (!tieOut) {
        return refuse(
          "invalid_input",
          `--date ${JSON.stringify(f.date)}: a calendar date YYYY-MM-DD`,
        );
      }
      if (f.format === "csv") return ok({ csv: tieOutCsv(f.line, tieOut) });
      return ok({ line: f.line, environment: environment.value, ...tieOut });
    },
  },
};

/** Optional flags: every other flag of a command is required. */
const optionalFlags = new Set([
  "payor",
  "payee",
  "service",
  "environment",
  "format",
  "parked",
  "job",
  "all-parked",
]);

/** Flags that take no value: given, they read "true". */
export const switchFlags: ReadonlySet<string> = new Set(["parked", "all-parked"]);

const flagValue = v.pipe(v.string(), v.maxLength(1000));

/** Checks a command's name and flags; a refusal here is a usage error. */
export function checkInvocation(name: string, flags: Flags): Result<Command, "usage"> {
  const command = adminCommands[name];
  if (!command) {
    return refuse("usage", `unknown command ${JSON.stringify(name)}; see \`deno task admin help\``);
  }
  for (const flag of Object.keys(flags)) {
    if (!(flag in command.flags)) return refuse("usage", `${name} takes no --${flag}`);
    if (!v.is(flagValue, flags[flag])) return refuse("usage", `--${flag} is too long`);
    if (switchFlags.has(flag) && flags[flag] !== "true") {
      return refuse("usage", `--${flag} takes no value`);
    }
  }
  for (const flag of Object.keys(command.flags)) {
    if (!optionalFlags.has(flag) && flags[flag] === undefined) {
      return refuse("usage", `${name} needs --${flag} (${command.flags[flag]})`);
    }
  }
  return ok(command);
}

/** Runs a command after checking its invocation. */
export async function runAdminCommand(
  ctx: CommandContext,
  name: string,
  flags: Flags,
): Promise<Result<Record<string, unknown>>> {
  const checked = checkInvocation(name, flags);
  if (!checked.ok) return checked;
  return await checked.value.run(ctx, flags);
}

/** The help text, generated from the table. */
export function adminHelp(): string {
  const lines = ["usage: deno task admin <command> [--flag value …] [--json]", "", "commands:"];
  for (const [name, command] of Object.entries(adminCommands)) {
    const flags = Object.keys(command.flags).map((flag) =>
      switchFlags.has(flag)
        ? `[--${flag}]`
        : optionalFlags.has(flag)
        ? `[--${flag} <${command.flags[flag]}>]`
        : `--${flag} <${command.flags[flag]}>`
    );
    lines.push(`  ${name.padEnd(15)} ${command.summary}`);
    if (flags.length > 0) lines.push(`  ${"".padEnd(15)} ${flags.join(" ")}`);
  }
  lines.push(
    "",
    "exit codes: 0 done, 1 refused (duplicate, not found, not active), 2 bad usage or input",
    "While the service runs, commands go through its loopback admin endpoint.",
  );
  return lines.join("\n");
}
