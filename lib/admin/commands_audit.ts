/**
 * The operator commands of the audit log: listing it, verifying its keyed chains (against signed
 * checkpoints too), writing a checkpoint, and printing the key that verifies checkpoints.
 */
import type { Environment } from "../platform/config.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import {
  type Command,
  environmentFlag,
  type Flags,
  limitFlag,
  pathFlag,
  reads,
  readsEverything,
} from "./command_kit.ts";
import {
  AUDIT_LISTED_DEFAULT,
  AUDIT_LISTED_MAX,
  listAudit,
  readAuditCheckpoints,
  takeAuditCheckpoint,
  verifyAudit,
  writeAuditCheckpoint,
} from "../audit/service.ts";
import { type AuditCheckpoint, currentAuditKeys, publicKeyText } from "../audit/anchor.ts";

/** The environments an --environment flag names: the one given, or both when it is left out. */
function environmentsFlag(flags: Flags): Result<Environment[], "invalid_input"> {
  if (flags.environment === undefined) return ok(["live", "test"]);
  const one = environmentFlag(flags, "live");
  return one.ok ? ok([one.value]) : one;
}

/** A time flag: an ISO 8601 date or date-time. */
function timeFlag(flags: Flags, name: string): Result<number | undefined, "invalid_input"> {
  const raw = flags[name];
  if (raw === undefined) return ok(undefined);
  const at = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(at)) {
    return refuse("invalid_input", `--${name} ${JSON.stringify(raw)}: a date or time in ISO 8601`, {
      field: name,
    });
  }
  return ok(at);
}

/** The commands of the audit log. */
export const auditCommands: Readonly<Record<string, Command>> = {
  "audit:list": {
    summary: "read the audit log, newest first, with filters",
    flags: {
      operator: "an operator's e-mail or id",
      action: "a command, e.g. wire:receive",
      object: "an object id",
      environment: "test or live (default: both)",
      since: "from this time (ISO 8601)",
      until: "before this time (ISO 8601)",
      limit: `rows, at most ${AUDIT_LISTED_MAX} (default ${AUDIT_LISTED_DEFAULT})`,
    },
    role: "viewer",
    reach: reads,
    run: async (ctx, f) => {
      const named = environmentsFlag(f);
      if (!named.ok) return named;
      const environments = named.value;
      const since = timeFlag(f, "since");
      if (!since.ok) return since;
      const until = timeFlag(f, "until");
      if (!until.ok) return until;
      const limit = limitFlag(f, AUDIT_LISTED_DEFAULT, AUDIT_LISTED_MAX);
      if (!limit.ok) return limit;
      const rows = await listAudit(ctx.databases, {
        environments,
        operator: f.operator,
        action: f.action,
        objectId: f.object,
        since: since.value,
        until: until.value,
        companyIds: ctx.operator?.companyScope ?? null,
        limit: limit.value,
      });
      return ok({ environments, rows });
    },
  },
  "audit:verify": {
    summary:
      "check the audit log's keyed chains, and with --checkpoints against signed checkpoints; exit 1 naming the first bad row",
    flags: {
      environment: "test or live (default: both)",
      checkpoints: "a directory of signed checkpoints (the backup copy destination)",
    },
    optional: ["checkpoints"],
    role: "viewer",
    reach: readsEverything,
    run: async (ctx, f) => {
      const named = environmentsFlag(f);
      if (!named.ok) return named;
      const environments = named.value;
      let checkpoints: AuditCheckpoint[] = [];
      if (f.checkpoints !== undefined) {
        const dir = pathFlag(ctx, f, "checkpoints");
        if (!dir.ok) return dir;
        const read = await readAuditCheckpoints(dir.value).catch((error: Error) => error);
        if (read instanceof Error) {
          return refuse(
            "invalid_input",
            `--checkpoints ${JSON.stringify(dir.value)}: ${read.message}`,
            {
              field: "checkpoints",
            },
          );
        }
        if (read.refused.length > 0) {
          return refuse(
            "audit_checkpoint_forged",
            `not signed by this installation's audit key: ${read.refused.join(", ")}`,
          );
        }
        checkpoints = read.checkpoints;
      }
      const report = await verifyAudit(ctx.databases, environments, checkpoints);
      const broken = environments.filter((environment) => report[environment].broken !== null);
      if (broken.length > 0) {
        const first = broken.map((environment) => {
          const bad = report[environment].broken!;
          return `${environment} row ${bad.seq}${bad.id ? ` (${bad.id})` : ""}: ${bad.reason}`;
        });
        return refuse("audit_chain_broken", `the audit chain is broken at ${first.join("; ")}`, {
          details: report,
        });
      }
      return ok(Object.fromEntries([
        ...environments.map((environment) => [
          environment,
          `${report[environment].rows} rows, chain intact`,
        ]),
        ...(f.checkpoints === undefined ? [] : [["checkpoints", checkpoints.length]]),
      ]));
    },
  },
  "audit:checkpoint": {
    summary: "write a signed checkpoint of both audit chains into a directory (backups do it too)",
    flags: { out: "the directory, e.g. the backup copy destination" },
    role: "admin",
    reach: readsEverything,
    run: async (ctx, f) => {
      const dir = pathFlag(ctx, f, "out");
      if (!dir.ok) return dir;
      const checkpoint = await takeAuditCheckpoint(ctx.databases, ctx.now);
      return ok({ file: await writeAuditCheckpoint(dir.value, checkpoint), ...checkpoint.chains });
    },
  },
  "audit:public-key": {
    summary: "print the ed25519 public key that verifies this installation's audit checkpoints",
    flags: {},
    role: "viewer",
    reach: readsEverything,
    run: () => Promise.resolve(ok({ public_key: publicKeyText(currentAuditKeys().publicKey) })),
  },
};
