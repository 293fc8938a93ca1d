/**
 * The use cases of unclaimed property: what a company holds that is owed and unclaimed (by state
 * and date), the due-diligence notices to the owners (a job), the NAUPA report of one state and
 * year, and its remittance, which moves each payout to `escheated` through the payout state
 * machine and its money to `unclaimed_remitted` through the one posting function, in one unit.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { ensureSweep, UNCLAIMED_SWEEP_JOB } from "./sweep.ts";
import type { JobHandler } from "../../db/scheduler.ts";
import type { Environment } from "../platform/config.ts";
import { sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { type NotificationSettings, notifyPayee } from "../notify/store.ts";
import {
  applyMove,
  type MoveRefusal,
  remitReturnedMoney,
  type ReturnedMoneyRefusal,
} from "../payouts/store.ts";
import { lobMails } from "../lob/store.ts";
import { type ObligationSettings, readObligationSettings } from "./store.ts";
import { type DueDiligenceLetter, printLetters } from "./letters.ts";
import { naupaDate, type NaupaProperty, type NaupaTotals, writeNaupaReport } from "./naupa.ts";
import {
  cameBackAfterCompletion,
  cutoffOf,
  defaultDormancy,
  DORMANCY_BY_STATE,
  DORMANCY_DEFAULT,
  dormancyDays,
  dormantAt,
  noticeAt,
  OWED_KINDS,
  owedState,
  PROPERTY_TYPES,
  type PropertyType,
  reportYearOf,
} from "./unclaimed_rules.ts";
import {
  dormancyOverrides,
  insertReport,
  loadReport,
  markRemitted,
  type NoticeRow,
  noticesOf,
  type OwedPayout,
  owedPayouts,
  recordEscheated,
  recordNotice,
  recordResponse,
  type ReportRow,
  setDormancy,
} from "./unclaimed_store.ts";

type Reader = Pick<WriteTx, "execute">;

/** A payout still owed, with what the rules say of it now. */
export interface UnclaimedItem extends OwedPayout {
  /** The state it is owed to, or null when the owner has no US address and no holder state is set. */
  readonly state: string | null;
  readonly dormancyDays: number;
  /** Where its dormancy comes from: the sandbox's, an admin's, or the built-in table's source. */
  readonly dormancySource: string;
  readonly dormantAt: number;
  /** When its owner is given notice, or null under the due-diligence threshold. */
  readonly noticeAt: number | null;
  readonly notices: readonly NoticeRow[];
  readonly reportYear: number;
}

/** The company's owed payouts with their state, dormancy, notices and report year. */
export async function unclaimedItems(
  reader: Reader,
  environment: Environment,
  companyId: string,
): Promise<UnclaimedItem[]> {
  const [settings, owed, overrides, notices] = await Promise.all([
    readObligationSettings(reader, companyId),
    owedPayouts(reader, companyId),
    dormancyOverrides(reader, companyId),
    noticesOf(reader, companyId),
  ]);
  // The sandbox's shortened dormancy applies in test only: live keeps the law's periods.
  const sandboxDays = environment === "test" ? settings.sandboxDormancyDays : null;
  return owed.map((item) => {
    const state = owedState(item.address?.state ?? null, settings.holderState);
    const dormancy = dormancyOf(state, item.propertyType, overrides, sandboxDays);
    const dormant = dormantAt(item.owedSince, dormancy.days);
    return {
      ...item,
      state,
      dormancyDays: dormancy.days,
      dormancySource: dormancy.source,
      dormantAt: dormant,
      noticeAt: noticeAt(item, dormant),
      notices: notices.filter((notice) => notice.payoutId === item.payoutId),
      reportYear: reportYearOf(dormant),
    };
  });
}

function dormancyOf(
  state: string | null,
  type: PropertyType,
  overrides: ReadonlyMap<string, number>,
  sandboxDays: number | null,
): { days: number; source: string } {
  if (sandboxDays !== null) return { days: sandboxDays, source: "the sandbox's dormancy" };
  const set = state === null ? undefined : overrides.get(`${state}/${type}`);
  if (set !== undefined) return { days: set, source: "set by an admin" };
  const built = defaultDormancy(state ?? "");
  return { days: dormancyDays(built.years), source: built.source };
}

/** A state's own dormancy period for a property type, other than every state's default. */
export interface DormancyPeriod {
  readonly state: string;
  readonly propertyType: PropertyType;
  readonly days: number;
  /** An admin's (`set by an admin`) or the built-in table's statute. */
  readonly source: string;
}

/**
 * The company's dormancy periods as its items get them: every state's default, and each state and
 * property type whose period differs from it (the built-in table's, an admin's over it), by state
 * then type. The sandbox's shortened dormancy is left aside: it replaces them all in test.
 */
export async function dormancyPeriodsOf(
  reader: Reader,
  companyId: string,
): Promise<{ default: { days: number; source: string }; states: DormancyPeriod[] }> {
  const overrides = await dormancyOverrides(reader, companyId);
  const states = new Set([
    ...Object.keys(DORMANCY_BY_STATE),
    ...[...overrides.keys()].map((key) => key.split("/")[0]),
  ]);
  const types = Object.keys(PROPERTY_TYPES) as PropertyType[];
  return {
    default: { days: dormancyDays(DORMANCY_DEFAULT.years), source: DORMANCY_DEFAULT.source },
    states: [...states].sort(byText).flatMap((state) =>
      types.flatMap((propertyType) => {
        const own = dormancyOf(state, propertyType, overrides, null);
        return DORMANCY_BY_STATE[state] === undefined &&
            !overrides.has(`${state}/${propertyType}`)
          ? []
          : [{ state, propertyType, ...own }];
      })
    ),
  };
}

/** Text in code-unit order: the same on every machine, whatever its locale. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Unclaimed items as the CLI and the console list them, by state then dormant date. */
export async function listUnclaimed(
  database: Database,
  companyId: string,
  options: { state?: string } = {},
): Promise<UnclaimedItem[]> {
  const items = await unclaimedItems(database.readClient, database.environment, companyId);
  return items.filter((item) => options.state === undefined || item.state === options.state)
    .sort((a, b) =>
      byText(a.state ?? "~", b.state ?? "~") || a.dormantAt - b.dormantAt ||
      byText(a.payoutId, b.payoutId)
    );
}

/** The companies in scope (null: every company), by name. */
async function companiesInScope(
  database: Database,
  companyIds: readonly string[] | null,
): Promise<{ id: string; name: string }[]> {
  const { rows } = await database.readClient.execute(
    companyIds === null ? "SELECT id, name FROM companies ORDER BY name, id" : {
      sql: `SELECT id, name FROM companies WHERE id IN (${
        companyIds.map(() => "?").join(", ")
      }) ORDER BY name, id`,
      args: [...companyIds],
    },
  );
  return rows.map((row) => ({ id: String(row.id), name: String(row.name) }));
}

/** Unclaimed items of the companies in scope (null: every company), for the console. */
export async function listUnclaimedInScope(
  database: Database,
  companyIds: readonly string[] | null,
): Promise<UnclaimedItem[]> {
  const companies = await companiesInScope(database, companyIds);
  const listed = await Promise.all(
    companies.map((company) => listUnclaimed(database, company.id)),
  );
  return listed.flat();
}

/** A company's obligation settings as the console shows them (obligations:set changes them). */
export interface ObligationSettingsView {
  readonly companyId: string;
  readonly companyName: string;
  /** This environment's: the sandbox's dormancy is set in test only. */
  readonly settings: ObligationSettings;
  /** How a fallback check goes: printed in house, or mailed by the mail provider. */
  readonly fallbackMailing: "in_house" | "provider";
  /** The dormancy periods an admin set over the built-in table, by state then type. */
  readonly dormancyOverrides: readonly { state: string; propertyType: string; days: number }[];
}

/** The obligation settings of the companies in scope (null: every company), for the console. */
export async function obligationSettingsInScope(
  database: Database,
  companyIds: readonly string[] | null,
): Promise<ObligationSettingsView[]> {
  const reader = database.readClient;
  const companies = await companiesInScope(database, companyIds);
  return await Promise.all(companies.map(async (company) => {
    const [settings, overrides, provider] = await Promise.all([
      readObligationSettings(reader, company.id),
      dormancyOverrides(reader, company.id),
      lobMails(reader, company.id),
    ]);
    return {
      companyId: company.id,
      companyName: company.name,
      settings,
      fallbackMailing: provider ? "provider" : "in_house",
      dormancyOverrides: [...overrides].sort(([a], [b]) => byText(a, b)).map(([key, days]) => {
        const [state, propertyType] = key.split("/");
        return { state, propertyType, days };
      }),
    };
  }));
}

/** What one due-diligence sweep did. */
export interface SweepOutcome {
  readonly noticed: number;
  readonly responded: number;
}

/**
 * Due diligence, in the caller's unit: each owed payout whose notice time came and that has no
 * notice yet gets one by e-mail (with a fresh portal link, when it has an e-mail) and one by
 * letter (to the address on file; recorded `no_address` without one); an owner who chose a
 * method since a notice has the notice recorded as answered. The next sweep is due at the next
 * notice of a payout owed now; a payout owed later schedules one when its offer falls due.
 */
export async function sweepDueDiligence(
  tx: WriteTx,
  deps: { environment: Environment; notifications: NotificationSettings },
  companyId: string,
  now: number,
): Promise<SweepOutcome> {
  const items = await unclaimedItems(tx, deps.environment, companyId);
  const responded = await recordResponses(tx, companyId, items, now);
  let noticed = 0;
  for (const item of items) {
    if (item.noticeAt === null || item.noticeAt > now || item.notices.length > 0) continue;
    if (item.email !== null) {
      await notifyPayee(tx, deps.notifications, item.payoutId, "unclaimed_notice", now);
      await recordNotice(tx, {
        companyId,
        payoutId: item.payoutId,
        channel: "email",
        outcome: "sent",
      }, now);
    }
    await recordNotice(tx, {
      companyId,
      payoutId: item.payoutId,
      channel: "letter",
      outcome: item.address === null ? "no_address" : "sent",
    }, now);
    noticed++;
  }
  const next = items.filter((item) => item.notices.length === 0 && item.noticeAt !== null)
    .map((item) => item.noticeAt!).filter((at) => at > now);
  if (next.length > 0) await ensureSweep(tx, companyId, Math.min(...next), now);
  return { noticed, responded };
}

/**
 * Records the owners who answered a notice by choosing a method (their payout is no longer owed,
 * and was neither canceled nor remitted); returns how many.
 */
async function recordResponses(
  tx: WriteTx,
  companyId: string,
  items: readonly UnclaimedItem[],
  now: number,
): Promise<number> {
  const owed = new Set(items.map((item) => item.payoutId));
  const notices = await noticesOf(tx, companyId);
  const answered = new Set(
    notices.filter((notice) => notice.outcome !== "responded" && !owed.has(notice.payoutId))
      .map((notice) => notice.payoutId),
  );
  let responded = 0;
  for (const payoutId of answered) {
    if (await ownerChose(tx, payoutId)) {
      await recordResponse(tx, payoutId, now);
      responded++;
    }
  }
  return responded;
}

/** Whether the owner of a payout that left the owed ones chose a method (not a cancel, not a remit). */
async function ownerChose(tx: Reader, payoutId: string): Promise<boolean> {
  const { rows } = await tx.execute({
    sql: "SELECT status, escheated_at FROM payouts WHERE id = ?",
    args: [payoutId],
  });
  // A returned card balance leaves the owed ones, its payout still completed, only by its remittance.
  return rows[0] !== undefined && rows[0].escheated_at === null &&
    !["modality_offered", "canceled", "escheated"].includes(String(rows[0].status));
}

/** The job handlers of unclaimed property. */
export function unclaimedJobHandlers(
  deps: { environment: Environment; notifications: NotificationSettings },
): Readonly<Record<string, JobHandler>> {
  return {
    [UNCLAIMED_SWEEP_JOB]: async (tx, job) => {
      await sweepDueDiligence(tx, deps, job.companyId, job.dueAt);
    },
  };
}

export type ReportRefusal =
  | "holder_state_missing"
  | "nothing_to_report"
  | "report_not_found"
  | "report_remitted"
  | "report_stale";

/** A written report: its record, its file and totals. */
export interface WrittenReport {
  readonly report: ReportRow;
  readonly text: string;
  readonly totals: NaupaTotals;
  readonly items: readonly UnclaimedItem[];
}

/**
 * Writes the NAUPA report of one state and year for the company, in the caller's unit: every owed
 * payout of that state dormant by the year's cut-off (June 30) whose owner was given notice, not
 * remitted before. The report is recorded with its payouts and SHA-256; remitting it moves them.
 */
export async function writeUnclaimedReport(
  tx: WriteTx,
  environment: Environment,
  request: { companyId: string; state: string; reportYear: number },
  now: number,
): Promise<Result<WrittenReport, ReportRefusal>> {
  const { companyId, state, reportYear } = request;
  const owed = await unclaimedItems(tx, environment, companyId);
  await recordResponses(tx, companyId, owed, now);
  const items = owed.filter((item) =>
    item.state === state && item.dormantAt <= cutoffOf(reportYear) &&
    (item.noticeAt === null || item.notices.length > 0)
  );
  if (items.length === 0) {
    return refuse(
      "nothing_to_report",
      `nothing owed to ${state} was dormant by ${reportYear}-06-30 with its due diligence done`,
      { field: "state" },
    );
  }
  const { rows } = await tx.execute({
    sql: "SELECT name, tin, holder_state FROM companies WHERE id = ?",
    args: [companyId],
  });
  const company = rows[0];
  const { text, totals } = writeNaupaReport({
    taxId: String(company.tin),
    name: String(company.name),
    incorporationState: company.holder_state === null ? null : String(company.holder_state),
    reportState: state,
    reportYear,
    cutoffDate: naupaDate(cutoffOf(reportYear)),
  }, items.map(propertyOf));
  const report = await insertReport(tx, {
    companyId,
    state,
    reportYear,
    payoutIds: items.map((item) => item.payoutId),
    totalCents: totals.reportedCents,
    sha256: await sha256Hex(new TextEncoder().encode(text)),
  }, now);
  return ok({ report, text, totals, items });
}

/** What a PROPERTY record says of an item. */
function propertyOf(item: UnclaimedItem): NaupaProperty {
  const noticed = item.notices.find((notice) => notice.outcome !== "responded");
  return {
    ownerLast: item.ownerLast,
    ownerFirst: item.ownerFirst,
    address1: item.address?.address_one ?? "",
    address2: item.address?.address_two ?? "",
    city: item.address?.city ?? "",
    state: item.address?.state ?? "",
    zip: item.address?.zip_code ?? "",
    country: item.address === null ? "" : "USA",
    transactionDate: naupaDate(item.createdAt),
    lastActivityDate: naupaDate(item.owedSince),
    propertyType: item.propertyType,
    amountCents: item.amountCents,
    checkNumber: item.checkNumber === null ? "" : String(item.checkNumber),
    accountNumber: item.payoutId,
    description: item.claim === null ? "claim payment" : `claim ${item.claim}`,
    dueDiligenceDate: noticed === undefined ? "" : naupaDate(noticed.sentAt),
    additionalOwners: item.additionalOwners,
  };
}

/** What a remittance moved. */
export interface Remittance {
  readonly report: ReportRow;
  readonly escheated: number;
  readonly totalCents: number;
}

/**
 * Records a report as filed and remits it, in the caller's unit: every payout it names moves to
 * `escheated` (its amount to `unclaimed_remitted`, from reserved or, where its expired offer gave
 * it back, from available), with its event; money of a completed payout that came back (a card
 * balance, a late return) goes from available, and its payout stays completed. Refused with nothing moved when a payout of it is no
 * longer owed (its owner chose since: write the report again) or the report was remitted before.
 */
export async function remitUnclaimedReport(
  tx: WriteTx,
  environment: Environment,
  reportId: string,
  now: number,
): Promise<Result<Remittance, ReportRefusal | MoveRefusal | ReturnedMoneyRefusal>> {
  const report = await loadReport(tx, reportId);
  if (!report) {
    return refuse("report_not_found", `no unclaimed report ${reportId}`, { field: "report" });
  }
  if (report.status === "remitted") {
    return refuse("report_remitted", `report ${reportId} was remitted already`, {
      field: "report",
    });
  }
  const owed = new Map(
    (await unclaimedItems(tx, environment, report.companyId)).map((item) => [item.payoutId, item]),
  );
  const gone = report.payoutIds.filter((payoutId) => !owed.has(payoutId));
  if (gone.length > 0) {
    return refuse(
      "report_stale",
      `report ${reportId} names payouts no longer owed (${
        gone.join(", ")
      }): their owners claimed them; write the report again`,
      { field: "report", details: { payout_ids: gone } },
    );
  }
  for (const payoutId of report.payoutIds) {
    const detail = `remitted to ${report.state} as unclaimed property (report ${report.id})`;
    const item = owed.get(payoutId)!;
    const moved = cameBackAfterCompletion(item.kind)
      ? await remitReturnedMoney(tx, payoutId, {
        amountCents: item.amountCents,
        detail: `the ${OWED_KINDS[item.kind]} that came back ${detail}`,
      }, now)
      : await applyMove(tx, payoutId, { kind: "escheat" }, now, { detail });
    // All or none: a payout the ledger refuses (available short) undoes the ones before it.
    if (!moved.ok) return tx.abort(moved);
    await recordEscheated(tx, payoutId, report.state, now);
  }
  await markRemitted(tx, report.id, now);
  return ok({
    report: { ...report, status: "remitted", remittedAt: now },
    escheated: report.payoutIds.length,
    totalCents: report.totalCents,
  });
}

/** Sets a state's dormancy for a property type, in the caller's unit. */
export function changeDormancy(
  tx: WriteTx,
  companyId: string,
  entry: { state: string; propertyType: PropertyType; days: number },
  now: number,
): Promise<void> {
  return setDormancy(tx, companyId, entry, now);
}

/** A report as the commands and the console show it. */
export function unclaimedReport(report: ReportRow) {
  return {
    report_id: report.id,
    state: report.state,
    report_year: report.reportYear,
    status: report.status,
    payout_ids: report.payoutIds,
    total_cents: report.totalCents,
    sha256: report.sha256,
    remitted_at: report.remittedAt === null ? null : new Date(report.remittedAt).toISOString(),
  };
}

/**
 * The due-diligence letters of the company's owed payouts whose letter notice went out (to an
 * address on file), as one print file; null when there is none to print.
 */
export async function letterPrintFile(
  database: Database,
  companyId: string,
): Promise<{ pdf: Uint8Array; letters: number } | null> {
  const items = await unclaimedItems(database.readClient, database.environment, companyId);
  const { rows } = await database.readClient.execute({
    sql: "SELECT name FROM companies WHERE id = ?",
    args: [companyId],
  });
  const letters: DueDiligenceLetter[] = items.flatMap((item) => {
    const letter = item.notices.find((n) => n.channel === "letter" && n.outcome === "sent");
    if (!letter || item.address === null || item.state === null) return [];
    const a = item.address;
    return [{
      ownerName: [item.ownerFirst, item.ownerLast].filter(Boolean).join(" "),
      addressLines: [
        a.address_one,
        ...(a.address_two ? [a.address_two] : []),
        `${a.city}, ${a.state} ${a.zip_code}`,
      ],
      amountCents: item.amountCents,
      claim: item.claim,
      state: item.state,
      reportedAfter: new Date(item.dormantAt).toISOString().slice(0, 10),
      date: new Date(letter.sentAt).toISOString().slice(0, 10),
    }];
  });
  if (letters.length === 0) return null;
  return { pdf: await printLetters(String(rows[0].name), letters), letters: letters.length };
}
