/**
 * The operator commands of the ledger's signed daily statements (lib/ledger/statements.ts):
 * closing the days that ended and listing them, verifying every stored day against the ledger
 * entries, the chain and the signatures, and printing the public key auditors check them with.
 */
import { currentAuditKeys, publicKeyText } from "../audit/anchor.ts";
import type { Environment } from "../platform/config.ts";
import { ok, refuse } from "../platform/result.ts";
import {
  closeLedgerDays,
  verifyLedgerStatements,
  writeLedgerStatementFiles,
} from "../ledger/statements.ts";
import {
  type Command,
  environmentFlag,
  type Flags,
  pathFlag,
  readsEverything,
} from "./command_kit.ts";
import type { Result } from "../platform/result.ts";

/** The environments --environment names, both when it is left out. */
function environmentsOf(f: Flags): Result<Environment[]> {
  if (f.environment === undefined) return ok(["live", "test"]);
  const one = environmentFlag(f, "live");
  return one.ok ? ok([one.value]) : one;
}

export const statementCommands: Readonly<Record<string, Command>> = {
  "ledger:statements": {
    summary:
      "close every line's bank days that ended (a signed, hash-chained statement of each) and list them; --verify re-derives every stored day from the ledger entries and checks the chain and the signatures, exit 1 naming the first rewritten day",
    flags: {
      verify: "check the stored statements instead",
      out: "also write the statements closed now into this directory (one file per line and day)",
      environment: "test or live (default: both)",
    },
    switches: ["verify"],
    optional: ["verify", "out"],
    paths: ["out"],
    role: "admin",
    reach: (_request, f) => {
      const environments = environmentsOf(f);
      const writes = f.verify === "true" || !environments.ok ? [] : environments.value;
      return Promise.resolve(ok({ writes, companies: "installation" as const }));
    },
    run: async (ctx, f) => {
      const environments = environmentsOf(f);
      if (!environments.ok) return environments;
      const keys = currentAuditKeys().ledgerStatements;
      const report: Record<string, unknown> = {};
      if (f.verify === "true") {
        const broken: string[] = [];
        for (const environment of environments.value) {
          const verified = await verifyLedgerStatements(ctx.databases[environment], keys.publicKey);
          report[environment] = verified.problems.length === 0
            ? `${verified.checked} statements, chain and signatures intact, every day re-derived`
            : verified.problems;
          broken.push(
            ...verified.problems.map((p) =>
              `${environment} line ${p.line} on ${p.date}: ${p.reason}`
            ),
          );
        }
        if (broken.length > 0) {
          return refuse("ledger_statements_broken", broken.join("; "), { details: report });
        }
        return ok(report);
      }
      const out = f.out === undefined ? null : pathFlag(ctx, f, "out");
      if (out !== null && !out.ok) return out;
      for (const environment of environments.value) {
        const closed = await closeLedgerDays({
          database: ctx.databases[environment],
          environment,
          secretBox: ctx.secretBox,
          keys,
        }, ctx.realNow);
        const { rows } = await ctx.databases[environment].readClient.execute(
          "SELECT count(*) AS n FROM ledger_statements",
        );
        report[environment] = {
          closed: closed.map((s) => ({
            line: s.line,
            line_id: s.lineId,
            date: s.date,
            seq: s.seq,
            hash: s.hash,
          })),
          statements: Number(rows[0].n),
          ...(out === null
            ? {}
            : { files: await writeLedgerStatementFiles(out.value, environment, closed) }),
        };
      }
      return ok(report);
    },
  },
  "ledger:public-key": {
    summary: "print the ed25519 public key that verifies the ledger's signed daily statements",
    flags: {},
    role: "viewer",
    reach: readsEverything,
    run: () =>
      Promise.resolve(
        ok({ public_key: publicKeyText(currentAuditKeys().ledgerStatements.publicKey) }),
      ),
  },
};
