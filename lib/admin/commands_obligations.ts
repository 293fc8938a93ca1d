/**
 * The operator commands of what an insurer owes: a company's deadline settings (what an unchosen
 * offer becomes, the default pay_by), its unclaimed-property settings, and unclaimed property
 * itself: what is owed by state and date, the NAUPA report of one state and year, and its
 * remittance once filed (a second admin approves it in live).
 */
import type { AuditedChange } from "../audit/service.ts";
import type { Environment } from "../platform/config.ts";
import { centsToDollars } from "../platform/money.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { requestApproval } from "../operators/approvals.ts";
import {
  approvalAnswer,
  BOTH,
  type Command,
  type CommandContext,
  type CommandRequest,
  companyIdByTin,
  environmentFlag,
  environmentReach,
  type Flags,
  objectReach,
  optionalTinReach,
  pathFlag,
  type Reach,
  rowsIn,
  tinReach,
} from "./command_kit.ts";
import {
  parseDormancyChange,
  parseReportRequest,
  parseSettingsChange,
} from "../obligations/settings.ts";
import { changeObligationSettings, obligationSettingsOf } from "../obligations/service.ts";
import type { ObligationSettings } from "../obligations/store.ts";
import {
  changeDormancy,
  dormancyPeriodsOf,
  letterPrintFile,
  listUnclaimed,
  type Remittance,
  remitUnclaimedReport,
  type UnclaimedItem,
  unclaimedReport,
  writeUnclaimedReport,
  type WrittenReport,
} from "../obligations/unclaimed.ts";
import { OWED_KINDS, PROPERTY_TYPES } from "../obligations/unclaimed_rules.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

const itemView = (item: UnclaimedItem) => ({
  payout_id: item.payoutId,
  kind: item.kind,
  kind_name: OWED_KINDS[item.kind],
  state: item.state,
  property_type: item.propertyType,
  amount: centsToDollars(item.amountCents),
  owner: [item.ownerFirst, item.ownerLast].filter(Boolean).join(" "),
  status: item.status,
  last_owner_activity: day(item.owedSince),
  dormancy_days: item.dormancyDays,
  dormancy_source: item.dormancySource,
  dormant_on: day(item.dormantAt),
  report_year: item.reportYear,
  notice_due: item.noticeAt === null ? null : day(item.noticeAt),
  notices: item.notices.map((n) => ({ channel: n.channel, outcome: n.outcome, at: iso(n.sentAt) })),
});

/** The audit of a change to the company a --tin names: `sql` (its one argument, the TIN) snapshots it. */
const companyAudit = (action: string, sql: string) => (f: Flags, reach: Reach): AuditedChange => ({
  action,
  objectType: "company",
  objectId: f.tin,
  companyId: reach.objectId ?? null,
  snapshot: (tx) => rowsIn(tx, sql, [f.tin]),
});

const reportNotFound = (f: Flags, environment: Environment) =>
  refuse("report_not_found", `no unclaimed report ${f.report} in ${environment}`, {
    field: "report",
  });

/** The company a --tin names, or its refusal. */
async function companyOf(ctx: CommandContext, f: Flags): Promise<Result<string>> {
  const companyId = await companyIdByTin(ctx, f.tin);
  return companyId === null
    ? refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" })
    : ok(companyId);
}

/** A command on the company a --tin names in the --environment it names. */
const tinInEnvironment = (changes: boolean) => async (request: CommandRequest, f: Flags) => {
  const named = environmentReach(f, changes);
  if (!named.ok) return named;
  return await tinReach(named.value.writes)(request, f);
};

const settingsView = (tin: string, settings: ObligationSettings) => ({
  tin,
  offer_expiry: settings.offerExpiryAction,
  pay_by_days: settings.payByDays,
  holder_state: settings.holderState,
  sandbox_dormancy_days: settings.sandboxDormancyDays,
});

/** The commands of deadlines and unclaimed property. */
export const obligationCommands: Readonly<Record<string, Command>> = {
  "obligations:show": {
    summary:
      "show a company's deadline and unclaimed-property settings, with its dormancy periods: every state's default and each state's own per property type (the built-in table's, an admin's)",
    flags: { tin: "the company's TIN" },
    role: "viewer",
    reach: optionalTinReach,
    run: async (ctx, f) => {
      const companyId = await companyIdByTin(ctx, f.tin);
      if (companyId === null) {
        return refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });
      }
      // Both environments keep the same periods (unclaimed:dormancy-set writes both).
      const dormancy = await dormancyPeriodsOf(ctx.databases.live.readClient, companyId);
      return ok({
        ...settingsView(f.tin, await obligationSettingsOf(ctx.databases, companyId)),
        dormancy_default_days: dormancy.default.days,
        dormancy_default_source: dormancy.default.source,
        dormancy_periods: dormancy.states.map((period) => ({
          state: period.state,
          property_type: period.propertyType,
          property_type_name: PROPERTY_TYPES[period.propertyType],
          days: period.days,
          source: period.source,
        })),
      });
    },
  },
  "obligations:set": {
    summary:
      "set what an unchosen offer becomes (cancel, fallback to a mailed check, hold as owed), the default pay_by days, the holder's state, and the sandbox's dormancy (both environments)",
    flags: {
      tin: "the company's TIN",
      "offer-expiry": "cancel, fallback or hold",
      "pay-by-days": "days from create to pay_by, 1-365, or none",
      "holder-state": "the holder's state of incorporation, two letters",
      "sandbox-dormancy-days": "test only: every dormancy period in days, or none",
    },
    optional: ["offer-expiry", "pay-by-days", "holder-state", "sandbox-dormancy-days"],
    role: "admin",
    reach: tinReach(BOTH),
    audit: companyAudit(
      "obligations:set",
      `SELECT id, offer_expiry_action, pay_by_days, holder_state, sandbox_dormancy_days
         FROM companies WHERE tin = ?`,
    ),
    run: async (ctx, f) => {
      const change = parseSettingsChange(f);
      if (!change.ok) return change;
      const companyId = await companyIdByTin(ctx, f.tin);
      if (companyId === null) {
        return refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });
      }
      const changed = await changeObligationSettings(ctx.databases, companyId, change.value);
      return ok(settingsView(f.tin, changed));
    },
  },
  "unclaimed:list": {
    summary:
      "what a company holds that is owed and unclaimed, by state and date: dormancy, due diligence, report year",
    flags: {
      tin: "the company's TIN",
      environment: "live (default) or test",
      state: "only the items owed to this state",
    },
    optional: ["state"],
    role: "viewer",
    reach: tinInEnvironment(false),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const company = await companyOf(ctx, f);
      if (!company.ok) return company;
      const items = await listUnclaimed(ctx.databases[environment.value], company.value, {
        state: f.state?.toUpperCase(),
      });
      return ok({ environment: environment.value, items: items.map(itemView) });
    },
  },
  "unclaimed:dormancy-set": {
    summary:
      "set a state's dormancy for a NAUPA property type (IN01, IN07) in days, over the built-in table (both environments)",
    flags: {
      tin: "the company's TIN",
      state: "two-letter state code",
      "property-type": "IN01 or IN07",
      days: "whole days, 1-7300",
    },
    role: "admin",
    reach: tinReach(BOTH),
    audit: companyAudit(
      "unclaimed:dormancy-set",
      `SELECT d.state, d.property_type, d.days FROM unclaimed_dormancy d
         JOIN companies c ON c.id = d.company_id WHERE c.tin = ? ORDER BY d.state, d.property_type`,
    ),
    run: async (ctx, f) => {
      const entry = parseDormancyChange(f);
      if (!entry.ok) return entry;
      const company = await companyOf(ctx, f);
      if (!company.ok) return company;
      for (const database of [ctx.databases.live, ctx.databases.test]) {
        await database.writer.write((tx) =>
          changeDormancy(tx, company.value, entry.value, ctx.now)
        );
      }
      return ok({
        tin: f.tin,
        state: entry.value.state,
        property_type: entry.value.propertyType,
        days: entry.value.days,
      });
    },
  },
  "unclaimed:report": {
    summary:
      "write the NAUPA standard electronic report of one state and year for --tin to --out (fixed width, CR/LF); it names what unclaimed:remit moves",
    flags: {
      tin: "the company's TIN (the holder)",
      environment: "live (default) or test",
      state: "the state reported to, two letters",
      "report-year": "the report year, YYYY (what was dormant by June 30)",
      out: "the file to write",
    },
    paths: ["out"],
    role: "admin",
    reach: tinInEnvironment(true),
    audit: (f, reach) => ({
      action: "unclaimed:report",
      objectType: "company",
      objectId: f.tin,
      companyId: reach.objectId ?? null,
    }),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const request = parseReportRequest(f);
      if (!request.ok) return request;
      const out = pathFlag(ctx, f, "out");
      if (!out.ok) return out;
      const company = await companyOf(ctx, f);
      if (!company.ok) return company;
      const written = await ctx.databases[environment.value].writer.write<
        Result<WrittenReport>
      >(async (tx) => {
        const report = await writeUnclaimedReport(tx, environment.value, {
          companyId: company.value,
          ...request.value,
        }, ctx.now);
        return report.ok ? report : tx.abort(report);
      });
      if (!written.ok) return written;
      await Deno.writeTextFile(out.value, written.value.text);
      return ok({
        environment: environment.value,
        ...unclaimedReport(written.value.report),
        file: out.value,
        records: written.value.totals.records,
        properties: written.value.totals.properties,
        amount: centsToDollars(written.value.totals.reportedCents),
      });
    },
  },
  "unclaimed:remit": {
    summary:
      "record a report as filed and remit it: its payouts become escheated and their money moves to unclaimed_remitted (live: a second admin approves it)",
    flags: { report: "the report id (ucr_…)", environment: "live (default) or test" },
    role: "admin",
    reach: objectReach(
      async (request, environment, f) => {
        const { rows } = await request.databases[environment].readClient.execute({
          sql: "SELECT company_id FROM unclaimed_reports WHERE id = ?",
          args: [f.report],
        });
        return rows[0] ? { companyId: String(rows[0].company_id) } : null;
      },
      reportNotFound,
      (f) => f.report,
    ),
    audit: (f) => ({
      action: "unclaimed:remit",
      objectType: "unclaimed_report",
      objectId: f.report,
      companyId: null,
      snapshot: (tx) =>
        rowsIn(tx, "SELECT status, remitted_at FROM unclaimed_reports WHERE id = ?", [f.report]),
    }),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      if (environment.value === "live") {
        const { rows } = await ctx.databases.live.readClient.execute({
          sql:
            "SELECT company_id, state, report_year, total_cents, status FROM unclaimed_reports WHERE id = ?",
          args: [f.report],
        });
        if (!rows[0]) return reportNotFound(f, "live");
        if (rows[0].status !== "written") {
          return refuse("report_remitted", `report ${f.report} was remitted already`, {
            field: "report",
          });
        }
        const requested = await requestApproval(ctx.operatorDeps, {
          operator: ctx.actor.operator!,
          origin: ctx.actor.origin,
        }, {
          kind: "unclaimed_report.remit",
          environment: "live",
          companyId: String(rows[0].company_id),
          objectId: f.report,
          summary: `unclaimed:remit ${f.report}: ${
            centsToDollars(Number(rows[0].total_cents))
          } to ${rows[0].state} for ${rows[0].report_year}`,
          payload: { report_id: f.report },
        }, ctx.now);
        return approvalAnswer(requested, { kind: "unclaimed_report.remit", report_id: f.report });
      }
      const remitted = await ctx.databases.test.writer.write<Result<Remittance>>(async (tx) => {
        const done = await remitUnclaimedReport(tx, "test", f.report, ctx.now);
        return done.ok ? done : tx.abort(done);
      });
      if (!remitted.ok) {
        return remitted.code === "report_not_found" ? reportNotFound(f, "test") : remitted;
      }
      return ok({
        environment: "test",
        ...unclaimedReport(remitted.value.report),
        escheated: remitted.value.escheated,
        amount: centsToDollars(remitted.value.totalCents),
      });
    },
  },
  "unclaimed:letters": {
    summary:
      "print the due-diligence letters of --tin's owed payouts whose letter notice went out to an address on file, one page each, into a PDF at --out",
    flags: {
      tin: "the company's TIN",
      environment: "live (default) or test",
      out: "the PDF file to write",
    },
    paths: ["out"],
    role: "clerk",
    reach: tinInEnvironment(false),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const out = pathFlag(ctx, f, "out");
      if (!out.ok) return out;
      const company = await companyOf(ctx, f);
      if (!company.ok) return company;
      const printed = await letterPrintFile(ctx.databases[environment.value], company.value);
      if (printed === null) {
        return refuse("nothing_to_print", `no due-diligence letter of ${f.tin} to print`, {
          field: "tin",
        });
      }
      await Deno.writeFile(out.value, printed.pdf, { mode: 0o600 });
      return ok({ environment: environment.value, file: out.value, letters: printed.letters });
    },
  },
};
