/**
 * The operator commands, in one table assembled from one table per capability (this file keeps
 * companies, users, lines, keys, fees, fundings, jobs and reports; operators, the audit log,
 * payments, bank, ACH files, checks, PayPal, backups and outboxes have their own files) and the
 * runner: the CLI and the loopback admin endpoint both parse flags and print help from it, so the
 * two can never disagree. Each command declares the least role it
 * needs, what it reaches (the environments it changes and the companies it acts on, for the
 * session, TOTP and company-scope checks) and how its changes are audited.
 */
import * as v from "valibot";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { Databases } from "../identity/admin.ts";
import { tieOutCsv, tieOutFundingsJson, tieOutJson } from "../ledger/tieout.ts";
import { centsToDollars, formatDollars, parseDollars } from "../platform/money.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { sha256Hex } from "../platform/keys.ts";
import { findEventById, queueDeliveries } from "../webhooks/event_store.ts";
import {
  findFunding,
  type ManualFundingMove,
  manualFundingReturnBlocker,
  recordManualFundingMove,
} from "../funding/service.ts";
import {
  addMembership,
  createCompany,
  createLine,
  createUser,
  listCompanies,
  revokeKey,
  rotateKey,
  setFees,
} from "../identity/admin.ts";
import { lineTieOut, verifyLedger } from "../ledger/reports.ts";
import { findJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { RuntimeSettings } from "../payouts/settings.ts";
import { listScheduledJobs, retryAllParkedJobs, retryParkedJob } from "./jobs.ts";
import {
  approvalAnswer,
  BOTH,
  type Command,
  type CommandContext,
  type CommandRequest,
  type DatabaseSettings,
  environmentFlag,
  environmentReach,
  type Flags,
  needsDatabases,
  objectReach,
  type Prompt,
  type Reach,
  reads,
  readsEverything,
  rowsIn,
  tinReach,
} from "./command_kit.ts";
import { achCommands } from "./commands_ach.ts";
import { reconCommands } from "./commands_recon.ts";
import { statementCommands } from "./commands_statements.ts";
import { bankCommands } from "./commands_bank.ts";
import { backupCommands } from "./commands_backup.ts";
import { outboxCommands } from "./commands_outbox.ts";
import { checkCommands } from "./commands_checks.ts";
import { railCommands } from "./commands_rails.ts";
import { batchCommands } from "./commands_batches.ts";
import { paypalCommands } from "./commands_paypal.ts";
import { lobCommands } from "./commands_lob.ts";
import { providerSettingsCommands } from "./commands_providers.ts";
import { paymentCommands } from "./commands_payments.ts";
import { operatorCommands } from "./commands_operators.ts";
import { auditCommands } from "./commands_audit.ts";
import { obligationCommands } from "./commands_obligations.ts";
import { type AuditedChange, auditedDatabases } from "../audit/service.ts";
import { authorizeCommand } from "../operators/rules.ts";
import { fundingAuditView } from "../funding/manual_approval.ts";
import { payoutAuditView } from "../payouts/approval_actions.ts";
import { actorOf, type OperatorDeps, readSession, touchSession } from "../operators/service.ts";
import { requestApproval } from "../operators/approvals.ts";
import { loadPayout, recordLateReturn } from "../payouts/store.ts";
import { lateReturn } from "../payouts/transition.ts";
import { domainNow, latestDomainNow } from "../sandbox/clock_store.ts";

/**
 * The rows of a key given by its secret or id and of the key that replaced it (hints only, never
 * hashes), found in each database by the flag, since a mirrored key may have its own id in each.
 */
function keySnapshot(key: string) {
  return async (tx: WriteTx) => {
    const hash = await sha256Hex(key);
    return await rowsIn(
      tx,
      `SELECT id, kind, hint, company_id, user_id, line_id, expires_at, revoked_at, replaced_by
         FROM api_keys WHERE secret_hash = ? OR id = ?
           OR id IN (SELECT replaced_by FROM api_keys WHERE secret_hash = ? OR id = ?)`,
      [hash, key, hash, key],
    );
  };
}

/** The audit of a key command: the key and its replacement, before and after. */
function keyAudit(action: string) {
  return (flags: Flags, reach: Reach): AuditedChange => ({
    action,
    objectType: "api_key",
    objectId: reach.objectId ?? null,
    companyId: reach.companies[0] ?? null,
    snapshot: keySnapshot(flags.key),
  });
}

/** Where a key given by secret or id is kept, and which companies it acts for. */
async function keyReach(request: CommandRequest, flags: Flags): Promise<Result<Reach>> {
  const hash = await sha256Hex(flags.key);
  const writes: Environment[] = [];
  const companies = new Set<string>();
  let keyId: string | null = null;
  for (const environment of BOTH) {
    const { rows } = await request.databases[environment].readClient.execute({
      sql: "SELECT id, company_id, user_id FROM api_keys WHERE secret_hash = ? OR id = ?",
      args: [hash, flags.key],
    });
    if (!rows[0]) continue;
    writes.push(environment);
    keyId = String(rows[0].id);
    if (rows[0].company_id !== null) companies.add(String(rows[0].company_id));
    if (rows[0].user_id !== null) {
      // A user key acts for every company of its user.
      const members = await request.databases.live.readClient.execute({
        sql: "SELECT company_id FROM memberships WHERE user_id = ?",
        args: [String(rows[0].user_id)],
      });
      for (const member of members.rows) companies.add(String(member.company_id));
    }
  }
  return ok({
    writes,
    companies: [...companies],
    hidden: refuse("key_not_found", "no key matches the given secret or id", { field: "key" }),
    objectId: keyId,
  });
}

/** The environments whose databases hold a key (a company key is in both). */
async function keyEnvironments(request: CommandRequest, flags: Flags): Promise<Environment[]> {
  const reach = await keyReach(request, flags);
  return reach.ok ? [...reach.value.writes] : [];
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
    return refuse(
      "line_not_found",
      `no line ${JSON.stringify(code)} for TIN ${tin} in ${environment}`,
      {
        field: "line",
      },
    );
  }
  return ok({ lineId: String(rows[0].id), companyId: String(rows[0].company_id) });
}

/**
 * An operator's record of what the bank did with one funding. In test it happens at once; in live
 * it waits for a second admin (dual control) and happens when approved.
 */
function fundingCommand(
  summary: string,
  move: ManualFundingMove,
  kind: "wire.receive" | "funding.return",
): Command {
  return {
    summary,
    flags: { funding: "the funding id (fund_…)", environment: "live (default) or test" },
    role: "admin",
    reach: objectReach(
      (request, environment, f) => findFunding(request.databases[environment], f.funding),
      (f, environment) => refuse("funding_not_found", `no funding ${f.funding} in ${environment}`),
      (f) => f.funding,
    ),
    audit: (f, reach) => ({
      action: move,
      objectType: "funding",
      objectId: f.funding,
      companyId: reach.companies[0] ?? null,
      snapshot: async (tx) => {
        const { rows } = await tx.execute({
          sql: "SELECT id, status, payment_method, amount_cents FROM fundings WHERE id = ?",
          args: [f.funding],
        });
        return rows[0] ? { ...rows[0] } : null;
      },
    }),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const database = ctx.databases[environment.value];
      const funding = await findFunding(database, f.funding);
      if (!funding) {
        return refuse("funding_not_found", `no funding ${f.funding} in ${environment.value}`);
      }
      // Refused now, not when a second admin approves.
      const blocker = move === "funding:return"
        ? await manualFundingReturnBlocker(database, funding.id)
        : null;
      if (blocker !== null) return refuse("funding_in_file", blocker, { field: "funding" });
      if (environment.value === "live") {
        const requested = await requestApproval(ctx.operatorDeps, {
          operator: ctx.actor.operator!,
          origin: ctx.actor.origin,
        }, {
          kind,
          environment: "live",
          companyId: funding.companyId,
          objectId: funding.id,
          summary: `${move} ${funding.id}: ${funding.paymentMethod} of ${
            formatDollars(funding.amountCents)
          }`,
          payload: { funding: fundingAuditView(funding) },
        }, ctx.now);
        return approvalAnswer(requested, { kind, funding_id: funding.id });
      }
      const done = await database.writer.write(
        async (tx): ReturnType<typeof recordManualFundingMove> => {
          const moved = await recordManualFundingMove(tx, move, f.funding, ctx.now);
          return moved.ok ? moved : tx.abort(moved);
        },
      );
      return done.ok
        ? ok({
          environment: environment.value,
          funding_id: done.value.after.id,
          status: done.value.after.status,
        })
        : done;
    },
  };
}

/** A return's code (R10, refunded): letters, digits and _, at most this many characters. */
const RETURN_REASON_LENGTH_MAX = 40;
const RETURN_REASON = new RegExp(`^[A-Za-z0-9_]{1,${RETURN_REASON_LENGTH_MAX}}$`);

/**
 * Money of a completed payout that came back after completion (a late ACH return, a refund),
 * recorded by hand: the payout stays completed and the money goes back to available. In test it
 * happens at once; in live it waits for a second admin (dual control) and happens when approved.
 */
const lateReturnCommand: Command = {
  summary:
    "record that a completed payout's money came back (late ACH return, refund): back to available, the payout stays completed (live: once a second admin approves)",
  flags: {
    payout: "the payout id (po_…)",
    reason: "the return's code, e.g. R10 or refunded",
    environment: "live (default) or test",
  },
  role: "admin",
  reach: objectReach(
    (request, environment, f) => loadPayout(request.databases[environment].readClient, f.payout),
    (f, environment) => refuse("payout_not_found", `no payout ${f.payout} in ${environment}`),
    (f) => f.payout,
  ),
  audit: (f, reach) => ({
    action: "payout:late-return",
    objectType: "payout",
    objectId: f.payout,
    companyId: reach.companies[0] ?? null,
    snapshot: async (tx) => {
      const payout = await loadPayout(tx, f.payout);
      return payout ? payoutAuditView(payout) : null;
    },
  }),
  run: async (ctx, f) => {
    const environment = environmentFlag(f, "live");
    if (!environment.ok) return environment;
    if (!RETURN_REASON.test(f.reason)) {
      return refuse(
        "invalid_input",
        `--reason ${
          JSON.stringify(f.reason)
        }: the return's code, letters, digits and _ (at most ${RETURN_REASON_LENGTH_MAX})`,
        { field: "reason" },
      );
    }
    const database = ctx.databases[environment.value];
    const payout = await loadPayout(database.readClient, f.payout);
    if (!payout) {
      return refuse("payout_not_found", `no payout ${f.payout} in ${environment.value}`);
    }
    if (environment.value === "live") {
      // A payout that is not completed is refused now, not when a second admin approves.
      const decided = lateReturn(payout, { returnedBefore: false });
      if (!decided.ok) return decided;
      const requested = await requestApproval(ctx.operatorDeps, {
        operator: ctx.actor.operator!,
        origin: ctx.actor.origin,
      }, {
        kind: "payout.late_return",
        environment: "live",
        companyId: payout.companyId,
        objectId: payout.id,
        summary: `payout:late-return ${payout.id} (${f.reason}): ${
          formatDollars(payout.amountCents - payout.payeeFeeCents)
        } back to available`,
        payload: { reason: f.reason, payout: payoutAuditView(payout) },
      }, ctx.now);
      return approvalAnswer(requested, {
        kind: "payout.late_return",
        payout_id: payout.id,
      });
    }
    const now = ctx.now;
    const done = await database.writer.write(
      async (tx): ReturnType<typeof recordLateReturn> => {
        const returned = await recordLateReturn(tx, payout.id, f.reason, now);
        return returned.ok ? returned : tx.abort(returned);
      },
    );
    return done.ok
      ? ok({
        environment: environment.value,
        payout_id: done.value.payout.id,
        status: done.value.payout.status,
        returned_cents: done.value.returnedCents,
        ledger_transaction_id: done.value.ledgerTransactionId,
      })
      : done;
  },
};

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

/** The object columns an audit snapshot shows of a company, a user or a line (no secrets). */
const companySnapshot = (tin: string) => (tx: WriteTx) =>
  rowsIn(
    tx,
    `SELECT c.id, c.name, c.tin, c.retry_max, c.retry_reasons, k.id AS key_id, k.hint AS key_hint
       FROM companies c LEFT JOIN api_keys k ON k.company_id = c.id AND k.kind = 'company'
      WHERE c.tin = ?`,
    [tin],
  );

const userSnapshot = (email: string) => (tx: WriteTx) =>
  rowsIn(
    tx,
    `SELECT u.id, u.email, k.id AS key_id, k.hint AS key_hint FROM users u
       LEFT JOIN api_keys k ON k.user_id = u.id WHERE u.email = ?`,
    [email.toLowerCase()],
  );

/** The longest a company may let its payees wait before the console's queue lists them. */
const PAYEE_WAIT_DAYS_MAX = 365;

/** The commands of companies, users, lines, keys, fees, fundings, jobs and reports. */
const identityAndOperationsCommands: Readonly<Record<string, Command>> = {
  "company:create": {
    summary: "create a company and print its CompanyApiKey (shown once)",
    flags: { name: "company name", tin: "9-digit TIN" },
    role: "admin",
    reach: () => Promise.resolve(ok({ writes: BOTH, companies: "installation" })),
    audit: (f) => ({
      action: "company:create",
      objectType: "company",
      objectId: f.tin,
      companyId: null,
      snapshot: companySnapshot(f.tin),
    }),
    run: async (ctx, f) => {
      const r = await createCompany(ctx.databases, { name: f.name, tin: f.tin }, ctx.now);
      return r.ok ? ok({ ...r.value.company, company_api_key: r.value.companyApiKey }) : r;
    },
  },
  "user:create": {
    summary: "create a user with a test and a live key (shown once)",
    flags: { email: "e-mail address" },
    role: "admin",
    reach: () => Promise.resolve(ok({ writes: BOTH, companies: [] })),
    audit: (f) => ({
      action: "user:create",
      objectType: "user",
      objectId: f.email.toLowerCase(),
      companyId: null,
      snapshot: userSnapshot(f.email),
    }),
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
    role: "admin",
    reach: tinReach(BOTH),
    audit: (f, reach) => ({
      action: "user:add",
      objectType: "membership",
      objectId: `${f.email.toLowerCase()} ${f.tin}`,
      companyId: reach.objectId ?? null,
      snapshot: (tx) =>
        rowsIn(
          tx,
          `SELECT m.user_id, m.company_id FROM memberships m JOIN users u ON u.id = m.user_id
             JOIN companies c ON c.id = m.company_id WHERE u.email = ? AND c.tin = ?`,
          [f.email.toLowerCase(), f.tin],
        ),
    }),
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
    role: "admin",
    reach: tinReach(BOTH),
    audit: (f, reach) => ({
      action: "line:create",
      objectType: "business_line",
      objectId: `${f.tin} ${f.code}`,
      companyId: reach.objectId ?? null,
      snapshot: (tx) =>
        rowsIn(
          tx,
          `SELECT l.id, l.code, l.company_id, k.id AS key_id, k.hint AS key_hint
             FROM business_lines l JOIN companies c ON c.id = l.company_id
             LEFT JOIN api_keys k ON k.line_id = l.id WHERE c.tin = ? AND l.code = ?`,
          [f.tin, f.code],
        ),
    }),
    run: async (ctx, f) => {
      const r = await createLine(ctx.databases, { tin: f.tin, code: f.code }, ctx.now);
      return r.ok
        ? ok({
          id: r.value.line.id,
          code: r.value.line.code,
          company_id: r.value.line.companyId,
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
    role: "admin",
    reach: keyReach,
    audit: keyAudit("key:rotate"),
    run: async (ctx, f) => {
      const environments = await keyEnvironments(ctx, f);
      const r = await rotateKey(ctx.databases, { key: f.key }, {
        now: ctx.now,
        graceSeconds: ctx.keyGraceSeconds,
      });
      return r.ok
        ? ok({
          environments,
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
    role: "admin",
    reach: keyReach,
    audit: keyAudit("key:revoke"),
    run: async (ctx, f) => {
      const r = await revokeKey(ctx.databases, { key: f.key }, ctx.now);
      if (!r.ok) return r;
      // A mirrored company key may have a different id in each database: each is named.
      return ok({
        environments: r.value.revoked.map((row) => row.environment),
        key_ids: Object.fromEntries(r.value.revoked.map((row) => [row.environment, row.keyId])),
        revoked_at: new Date(r.value.revokedAt).toISOString(),
      });
    },
  },
  "company:list": {
    summary: "list companies with their lines and users (an operator's own companies only)",
    flags: {},
    role: "viewer",
    reach: reads,
    run: async (ctx) => {
      const scope = ctx.operator?.companyScope ?? null;
      const companies = await listCompanies(ctx.databases);
      return ok({
        companies: scope === null ? companies : companies.filter((c) => scope.includes(c.id)),
      });
    },
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
    role: "admin",
    reach: tinReach(BOTH),
    audit: (f, reach) => ({
      action: "fees:set",
      objectType: "fee_schedule",
      objectId: `${f.tin} method ${f.method}`,
      companyId: reach.objectId ?? null,
      snapshot: (tx) =>
        rowsIn(
          tx,
          `SELECT f.payment_method_id, f.payor_fee_cents, f.payee_fee_cents, f.service_fee_cents
             FROM fee_schedules f JOIN companies c ON c.id = f.company_id
            WHERE c.tin = ? AND f.payment_method_id = ?`,
          [f.tin, Number(f.method)],
        ),
    }),
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
          // Dollars, as the flags take them and the API shows money.
          currency: "USD",
          payor_fee: centsToDollars(payor),
          payee_fee: centsToDollars(payee),
          service_fee: centsToDollars(service),
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
    role: "admin",
    reach: tinReach(BOTH),
    audit: (f, reach) => ({
      action: "retry:set",
      objectType: "company",
      objectId: f.tin,
      companyId: reach.objectId ?? null,
      snapshot: (tx) =>
        rowsIn(tx, "SELECT id, retry_max, retry_reasons FROM companies WHERE tin = ?", [f.tin]),
    }),
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
  "payee-wait:set": {
    summary:
      "set the days a payee may wait (to choose, or for an endorsement) before the payout needs action (both environments)",
    flags: { tin: "the company's TIN", days: "whole days, 1-365" },
    role: "admin",
    reach: tinReach(BOTH),
    audit: (f, reach) => ({
      action: "payee-wait:set",
      objectType: "company",
      objectId: f.tin,
      companyId: reach.objectId ?? null,
      snapshot: (tx) =>
        rowsIn(tx, "SELECT id, payee_wait_days FROM companies WHERE tin = ?", [f.tin]),
    }),
    run: async (ctx, f) => {
      const days = /^\d{1,3}$/.test(f.days) ? Number(f.days) : 0;
      if (days < 1 || days > PAYEE_WAIT_DAYS_MAX) {
        return refuse(
          "invalid_input",
          `--days ${JSON.stringify(f.days)}: a whole number from 1 to ${PAYEE_WAIT_DAYS_MAX}`,
          { field: "days" },
        );
      }
      for (const database of [ctx.databases.live, ctx.databases.test]) {
        const updated = await database.writer.write((tx) =>
          tx.execute({
            sql: "UPDATE companies SET payee_wait_days = ? WHERE tin = ?",
            args: [days, f.tin],
          })
        );
        if (updated.rowsAffected === 0) {
          return refuse("company_not_found", `no company with TIN ${f.tin}`);
        }
      }
      return ok({ tin: f.tin, payee_wait_days: days });
    },
  },
  "wire:receive": fundingCommand(
    "record that a pending wire arrived: its amount becomes available (live: once a second admin approves)",
    "wire:receive",
    "wire.receive",
  ),
  "funding:return": fundingCommand(
    "record that the bank returned a pending ACH funding (live: once a second admin approves)",
    "funding:return",
    "funding.return",
  ),
  "payout:late-return": lateReturnCommand,
  "event:replay": {
    summary: "deliver an event again to every endpoint that receives it (both surfaces)",
    flags: { event: "the event id (evt_…)", environment: "live (default) or test" },
    role: "clerk",
    reach: objectReach(
      (request, environment, f) =>
        findEventById(request.databases[environment].readClient, f.event),
      (f, environment) =>
        refuse("event_not_found", `no event ${f.event} in ${environment}`, { field: "event" }),
    ),
    audit: (f, reach) => ({
      action: "event:replay",
      objectType: "event",
      objectId: f.event,
      companyId: reach.companies[0] ?? null,
      snapshot: async (tx) => {
        const { rows } = await tx.execute({
          sql: "SELECT count(*) AS deliveries FROM webhook_deliveries WHERE event_id = ?",
          args: [f.event],
        });
        return { deliveries: Number(rows[0].deliveries) };
      },
    }),
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
        queueDeliveries(tx, event, { manual: true, surfaces: "all" }, ctx.realNow)
      );
      return ok({ environment: environment.value, event_id: event.id, deliveries });
    },
  },
  "jobs:list": {
    summary: "list pending scheduled jobs, earliest due first, or with --parked the parked ones",
    flags: {
      parked: "list the parked jobs (failed for good, waiting for an operator)",
      environment: "live (default) or test",
    },
    role: "viewer",
    reach: reads,
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const parked = f.parked !== undefined;
      const listed = await listScheduledJobs(ctx.databases[environment.value], parked);
      const scope = ctx.operator?.companyScope ?? null;
      return ok({
        environment: environment.value,
        parked,
        jobs: scope === null
          ? listed.jobs
          : listed.jobs.filter((job) => scope.includes(job.company_id)),
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
    role: "clerk",
    reach: async (request, f) => {
      const environment = environmentReach(f, true);
      if (!environment.ok) return environment;
      if (f.job === undefined) {
        return ok({ writes: environment.value.writes, companies: "installation" });
      }
      const job = await findJob(
        request.databases[environment.value.environment].readClient,
        f.job,
      );
      return ok({
        writes: environment.value.writes,
        companies: job ? [job.companyId] : [],
        hidden: refuse("job_not_found", `no job ${f.job} in ${environment.value.environment}`, {
          field: "job",
        }),
      });
    },
    audit: (f, reach) => ({
      action: "jobs:retry",
      objectType: "scheduled_job",
      objectId: f.job ?? "all parked",
      companyId: reach.companies === "installation" ? null : reach.companies[0] ?? null,
      snapshot: f.job === undefined
        ? undefined
        : (tx) =>
          rowsIn(tx, "SELECT id, due_at, done_at, error FROM scheduled_jobs WHERE id = ?", [f.job]),
    }),
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
        ? ok(await retryAllParkedJobs(database, ctx.realNow))
        : await retryParkedJob(database, f.job, ctx.realNow);
      return retried.ok
        ? ok({ environment: environment.value, requeued: retried.value.requeued })
        : retried;
    },
  },
  "ledger:verify": {
    summary: "recompute every balance and transaction from the entries; exit 1 on any difference",
    flags: { environment: "test or live (default: both)" },
    role: "viewer",
    reach: readsEverything,
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
    role: "viewer",
    reach: tinReach(
      [],
      (f) =>
        refuse(
          "line_not_found",
          `no line ${JSON.stringify(f.line)} for TIN ${f.tin} in ${f.environment ?? "live"}`,
          { field: "line" },
        ),
    ),
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
      if (f.format === "csv") {
        return ok({ csv: tieOutCsv(f.line, tieOut), environment: environment.value });
      }
      return ok({
        line: f.line,
        environment: environment.value,
        ...tieOutJson(tieOut),
        fundings: tieOutFundingsJson(tieOut),
      });
    },
  },
};

/** The core commands: companies, users, lines, keys, fees, fundings, jobs, reports, operators, audit. */
export const coreCommands: Readonly<Record<string, Command>> = {
  ...identityAndOperationsCommands,
  ...operatorCommands,
  ...auditCommands,
};

/** Every command: the core table and one table per capability (bank, ACH files, checks, PayPal, backups, outboxes). */
export const adminCommands: Readonly<Record<string, Command>> = {
  ...coreCommands,
  ...bankCommands,
  ...achCommands,
  ...checkCommands,
  ...railCommands,
  ...batchCommands,
  ...paypalCommands,
  ...lobCommands,
  ...providerSettingsCommands,
  ...backupCommands,
  ...outboxCommands,
  ...paymentCommands,
  ...reconCommands,
  ...statementCommands,
  ...obligationCommands,
};

/** Optional flags of every table: every other flag of a command is required unless it says so. */
const optionalFlags = new Set([
  "payor",
  "payee",
  "service",
  "environment",
  "format",
  "parked",
  "job",
  "all-parked",
  "role",
  "companies",
  "first",
  "operator",
  "action",
  "object",
  "since",
  "until",
  "limit",
  "status",
  "reason",
]);

/** Flags that take no value: given, they read "true". */
export const switchFlags: ReadonlySet<string> = new Set([
  "parked",
  "all-parked",
  "first",
  ...Object.values(adminCommands).flatMap((command) => command.switches ?? []),
]);

const isOptional = (command: Command, flag: string) =>
  optionalFlags.has(flag) || (command.optional ?? []).includes(flag);

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
    if (!isOptional(command, flag) && flags[flag] === undefined) {
      return refuse("usage", `${name} needs --${flag} (${command.flags[flag]})`);
    }
  }
  return ok(command);
}

/** Refusals of the input itself (exit code 2, HTTP 400) rather than of the action. */
export function isInputRefusal(code: string): boolean {
  return code === "usage" || code === "invalid_input" || code === "weak_password";
}

/** The prompts of a command, for the CLI (never flags: secrets stay out of the shell history). */
export function promptsOf(name: string, flags: Flags): readonly Prompt[] {
  return (adminCommands[name]?.prompts ?? []).filter((prompt) => prompt.when?.(flags) ?? true);
}

/**
 * Runs a command after checking its invocation and its operator: a session is needed outside dev
 * mode and for every live change; the operator's role, TOTP (for live changes outside dev mode)
 * and company scope must allow it. A refused command writes nothing, not even the session's use.
 */
export async function runAdminCommand(
  request: CommandRequest,
  name: string,
  flags: Flags,
): Promise<Result<Record<string, unknown>>> {
  const checked = checkInvocation(name, flags);
  if (!checked.ok) return checked;
  const command = checked.value;
  if (!needsDatabases(command)) {
    return refuse(
      "usage",
      `${name} opens no database of the service: run it with the CLI, \`deno task admin ${name}\``,
    );
  }
  const databaseSettings = notGiven<DatabaseSettings>(
    `${name} runs on open databases`,
    "databaseSettings",
  );
  const operatorDeps: OperatorDeps = {
    databases: request.databases,
    secretBox: request.secretBox,
    dev: request.dev,
    runtimeSettings: request.runtimeSettings,
  };
  if (command.public?.(flags)) {
    return await command.run({
      ...request,
      databaseSettings,
      operatorDeps,
      operator: null,
      actor: actorOf(null, request.origin),
      realNow: request.now,
    }, flags);
  }
  const reach = await command.reach(request, flags);
  if (!reach.ok) return reach;
  const session = request.sessionToken === null
    ? null
    : await readSession(operatorDeps, request.sessionToken, request.now);
  const operator = session?.ok ? session.value : null;
  if (operator === null && (!request.dev || reach.value.writes.includes("live"))) {
    if (session && !session.ok) return session;
    return refuse(
      "session_required",
      `${name} needs an operator session: sign in with \`deno task admin login\``,
    );
  }
  if (operator !== null) {
    const allowed = authorizeCommand(operator, {
      name,
      role: command.role,
      writesLive: reach.value.writes.includes("live"),
      companies: reach.value.companies,
      hidden: reach.value.hidden,
    }, request.dev);
    if (!allowed.ok) return allowed;
    await touchSession(operatorDeps, operator, request.now);
  }
  const actor = actorOf(operator, request.origin);
  const databases = command.audit
    ? auditedDatabases(request.databases, actor, command.audit(flags, reach.value), request.now)
    : request.databases;
  const now = await commandNow(request, reach.value);
  return await command.run(
    {
      ...request,
      now,
      realNow: request.now,
      databases,
      databaseSettings,
      operatorDeps,
      operator,
      actor,
    },
    flags,
  );
}

/**
 * The one "now" a command decides and dates with: the real time when it changes live (or both);
 * when it changes only test, the sandbox time of the company it changes (of the furthest-ahead
 * company when it changes several), so an operator's action lands where the sandbox's own jobs
 * and moves are. Sessions and audit rows keep the real time.
 */
async function commandNow(request: CommandRequest, reach: Reach): Promise<number> {
  if (reach.writes.length !== 1 || reach.writes[0] !== "test") return request.now;
  const database = request.databases.test;
  return reach.companies !== "installation" && reach.companies.length === 1
    ? await domainNow(database, reach.companies[0], request.now)
    : await latestDomainNow(database, request.now);
}

/**
 * What a command that opens no database runs with: neither databases nor a sealing key, but
 * where the databases are (migrate opens them itself), read from the configuration by the caller.
 */
export type RequestWithoutDatabases =
  & Omit<CommandRequest, "databases" | "secretBox" | "runtimeSettings">
  & { readonly databaseSettings: DatabaseSettings };

/** A stand-in for what a command was not given (`why`): any use is a programmer error. */
function notGiven<T extends object>(why: string, what: string): T {
  return new Proxy({} as T, {
    get(_target, property) {
      throw new Error(`${why}, yet read ${what}.${String(property)}`);
    },
  });
}

/**
 * Runs a public command that opens no database (`needsDatabases: false`: secrets:generate,
 * restore), so that it works in a DATA_DIR holding none and never creates one.
 */
export async function runWithoutDatabases(
  request: RequestWithoutDatabases,
  name: string,
  flags: Flags,
): Promise<Result<Record<string, unknown>>> {
  const checked = checkInvocation(name, flags);
  if (!checked.ok) return checked;
  const command = checked.value;
  if (needsDatabases(command) || !command.public?.(flags)) {
    throw new Error(`${name} is not a public command without databases`);
  }
  const why = `${name} declares needsDatabases: false`;
  const databases = notGiven<Databases>(why, "databases");
  const secretBox = notGiven<SecretBox>(why, "secretBox");
  return await command.run({
    ...request,
    databases,
    secretBox,
    runtimeSettings: notGiven<RuntimeSettings>(why, "runtimeSettings"),
    operatorDeps: { databases, secretBox, dev: request.dev },
    operator: null,
    actor: actorOf(null, request.origin),
    realNow: request.now,
  }, flags);
}

/** The help text, generated from the table. */
export function adminHelp(): string {
  const lines = ["usage: deno task admin <command> [--flag value …] [--json]", "", "commands:"];
  for (const [name, command] of Object.entries(adminCommands)) {
    const flags = Object.keys(command.flags).map((flag) =>
      switchFlags.has(flag)
        ? `[--${flag}]`
        : isOptional(command, flag)
        ? `[--${flag} <${command.flags[flag]}>]`
        : `--${flag} <${command.flags[flag]}>`
    );
    lines.push(`  ${name.padEnd(17)} ${command.summary} (${command.role})`);
    if (flags.length > 0) lines.push(`  ${"".padEnd(17)} ${flags.join(" ")}`);
  }
  lines.push(
    "",
    "exit codes: 0 done, 1 refused (duplicate, not found, not active, not allowed), 2 bad usage or input",
    "Sign in with `login` (e-mail, password and TOTP code are prompted); each operator's session is",
    "kept in DATA_DIR/operator-sessions/, and --as EMAIL chooses one when several are signed in.",
    "Live changes need a session signed in with TOTP (dev mode: no TOTP). Dev mode is a data",
    "directory `deno task dev` made; elsewhere JWT_SECRET and ENCRYPTION_KEY are required.",
    "While the service runs, commands go through its loopback admin endpoint. The CLI never",
    "creates a database: DATA_DIR must be the service's data directory (its test.db and live.db).",
  );
  return lines.join("\n");
}
