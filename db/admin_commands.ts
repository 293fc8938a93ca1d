/**
 * The operator commands, in one table: the CLI and the loopback admin endpoint both parse flags
 * and print help from it, so the two can never disagree.
 */
import * as v from "valibot";
import { ok, refuse, type Result } from "../lib/result.ts";
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
} from "./identity_admin.ts";

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

/** "12.34" → 1234; at most two decimals, no sign, no exponent. */
function dollarsToCents(text: string): number | null {
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return null;
  return Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"));
}

function feeFlag(flags: Flags, name: string): Result<number, "invalid_input"> {
  const raw = flags[name] ?? "0";
  const cents = dollarsToCents(raw);
  if (cents === null) {
    return refuse(
      "invalid_input",
      `--${name} ${JSON.stringify(raw)}: dollars with at most two decimals, e.g. 1.50`,
      {
        field: name,
      },
    );
  }
  return ok(cents);
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
};

/** Optional flags: every other flag of a command is required. */
const optionalFlags = new Set(["payor", "payee", "service"]);

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
      optionalFlags.has(flag)
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
