/**
 * Entries this service sent, set up directly in a temporary database for the import tests: a
 * payout moved through the state machine to funds_sent (or completed), or an ACH funding, each
 * with its rail_batch_entries row (trace, receiving DFI, amount); and real NACHA return files
 * (buildReturnFile) answering them.
 */
import assert from "node:assert/strict";
import type { Database } from "../db/client.ts";
import { type AchImportDeps, importAchFile } from "../lib/ach/imports.ts";
import { buildReturnFile, type Correction, type ReturnToWrite } from "../lib/ach/nacha.ts";
import { addFunds, receiveWire, recordAchDebitSent } from "../lib/funding/store.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { readFeeSchedule } from "../lib/payouts/fee_store.ts";
import { feesFor } from "../lib/payouts/fees.ts";
import { applyMove, createDisbursement } from "../lib/payouts/store.ts";
import type { Environment } from "../lib/platform/config.ts";
import { newId } from "../lib/platform/keys.ts";
import { scheduleJob } from "../db/scheduler_store.ts";
import { openTempDatabase, testSecretBox } from "./helpers.ts";
import { moneyBatchDeps } from "./money_core_helpers.ts";

export const NOW = Date.UTC(2026, 10, 24, 15, 0); // Tuesday 2026-11-24, 10:00 in New York
export const ACH = 1;
export const ODFI = "02100002";
export const ROUTING = "021000021";
export const COMPANY = "co_imports";
export const LINE = "line_imports";
/** Payor 150, payee 50, service 25: a $100.00 payout holds $101.75 and sends $99.50. */
export const FEES = { payor: 150, payee: 50, service: 25 };

export interface ImportFixture {
  readonly database: Database;
  readonly deps: AchImportDeps;
  /** The transmitted ACH file (rail batch) every entry of the fixture is in. */
  readonly batchId: string;
  /** A payout of `amountCents` to `account`, moved to funds_sent (or completed), with its entry. */
  credit(options?: CreditOptions): Promise<SentCredit>;
  /** A pending ACH funding of `amountCents` and its debit entry. */
  debit(amountCents: number, status?: "sent" | "completed"): Promise<SentDebit>;
  import(entries: readonly ReturnToWrite[], fileName?: string): ReturnType<typeof importAchFile>;
  rows(sql: string, ...args: (string | number)[]): Promise<Record<string, unknown>[]>;
  /** Everything an import may change, to compare before and after. */
  snapshot(): Promise<unknown>;
}

export interface CreditOptions {
  readonly amountCents?: number;
  readonly account?: string;
  readonly routing?: string;
  readonly accountType?: "checking" | "savings";
  /** How far the payout went (default sent: funds_sent, its entry sent). */
  readonly stage?: "selected" | "sent" | "completed";
  /** The entry's status (default: sent, or completed for a completed payout). */
  readonly entryStatus?: "batched" | "sent" | "completed" | "voided";
}

export interface SentCredit {
  readonly payoutId: string;
  readonly entryId: string;
  readonly trace: string;
  readonly account: string;
  readonly routing: string;
  /** What the entry carried: the amount less the payee fee. */
  readonly sentCents: number;
}

export interface SentDebit {
  readonly fundingId: string;
  readonly entryId: string;
  readonly trace: string;
  readonly amountCents: number;
}

let traceSequence = 0;
const nextTrace = () => `${ODFI}${String(++traceSequence).padStart(7, "0")}`;

/** A company funded with $100,000.00 by wire on a temporary database of `environment`. */
export async function withImports(
  fn: (f: ImportFixture) => Promise<void>,
  environment: Environment = "test",
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-imports-" });
  const database = await openTempDatabase(dir, environment);
  try {
    await fn(await importFixture(database, environment));
  } finally {
    await database.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function importFixture(database: Database, environment: Environment): Promise<ImportFixture> {
  await database.writer.write(async (tx) => {
    await tx.execute({
      sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Acme', '123456789', ?)",
      args: [COMPANY, NOW],
    });
    await tx.execute({
      sql: "INSERT INTO business_lines (id, company_id, code, created_at) VALUES (?, ?, 'auto', ?)",
      args: [LINE, COMPANY, NOW],
    });
    await tx.execute({
      sql: "INSERT INTO fee_schedules VALUES (?, ?, ?, ?, ?)",
      args: [COMPANY, ACH, FEES.payor, FEES.payee, FEES.service],
    });
    const funded = await addFunds(
      tx,
      {
        companyId: COMPANY,
        lineId: LINE,
        paymentMethod: "WireTransfer",
        amountCents: 10_000_000,
        description: "wire",
        largeDisbursement: false,
        requestFingerprint: "wire",
      },
      environment,
      NOW,
    );
    assert.ok(funded.ok);
    // A live wire waits until the operator records its arrival.
    if (environment === "live") {
      assert.ok((await receiveWire(tx, funded.value.funding.id, NOW)).ok);
    }
  });
  const batchId = newId("rbt");
  await database.writer.write((tx) =>
    tx.execute({
      sql:
        `INSERT INTO rail_batches (id, company_id, rail, status, entry_count, total_cents, cutoff_at,
              rail_reference, transmitted_at, created_at)
            VALUES (?, ?, 'ach', 'transmitted', 0, 0, ?, 'sandbox://file', ?, ?)`,
      args: [batchId, COMPANY, NOW, NOW, NOW],
    })
  );
  const deps: AchImportDeps = moneyBatchDeps(database, environment);
  let sequence = 0;
  const rows = async (sql: string, ...args: (string | number)[]) =>
    (await database.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));
  const insertEntry = (entry: {
    payoutId?: string;
    fundingId?: string;
    direction: "credit" | "debit";
    amountCents: number;
    status: string;
    trace: string;
    routing: string;
    account: string;
    transactionCode: number;
  }) => {
    const id = newId("rbe");
    return database.writer.write(async (tx) => {
      await tx.execute({
        sql: `INSERT INTO rail_batch_entries (id, company_id, rail, batch_id, payout_id, funding_id,
                direction, reference, amount_cents, status, trace_number, receiving_dfi,
                account_last_four, transaction_code, entry_class, effective_date, created_at)
              VALUES (?, ?, 'ach', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '2026-11-24', ?)`,
        args: [
          id,
          COMPANY,
          batchId,
          entry.payoutId ?? null,
          entry.fundingId ?? null,
          entry.direction,
          `${entry.payoutId ?? entry.fundingId}-1`,
          entry.amountCents,
          entry.status,
          entry.trace,
          entry.routing.slice(0, 8),
          entry.account.slice(-4),
          entry.transactionCode,
          entry.direction === "credit" ? "PPD" : "CCD",
          NOW,
        ],
      });
      return id;
    });
  };

  const fixture: ImportFixture = {
    database,
    deps,
    batchId,
    rows,
    async credit(options = {}) {
      const amountCents = options.amountCents ?? 10_000;
      const account = options.account ?? "000123456789";
      const routing = options.routing ?? ROUTING;
      const accountType = options.accountType ?? "checking";
      const stage = options.stage ?? "sent";
      const n = ++sequence;
      const payoutId = await database.writer.write(async (tx) => {
        const created = await createDisbursement(tx, {
          companyId: COMPANY,
          lineId: LINE,
          kind: "disbursement",
          externalUuid: `d${n}`,
          requestFingerprint: "x",
          largeDisbursement: false,
          payouts: [{
            payeeUuid: `p${n}`,
            amountCents,
            allowedPaymentMethodIds: [ACH, 2],
            payee: { email: `payee${n}@example.test`, first_name: "Pat", last_name: `Doe${n}` },
          }],
        }, NOW);
        assert.ok(created.ok, created.ok ? "" : created.message);
        const id = created.value.payouts[0].id;
        const moves = [
          { kind: "offer" } as const,
          {
            kind: "select",
            paymentMethodId: ACH,
            fees: feesFor(await readFeeSchedule(tx, COMPANY), ACH),
          } as const,
        ];
        for (const move of moves) {
          const moved = await applyMove(tx, id, move, NOW, {
            methodDetails: {
              modality: "ach",
              routing_number: routing,
              account_type: accountType,
              account_sealed: await testSecretBox.sealText(account),
              last_four: account.slice(-4),
            },
          });
          assert.ok(moved.ok, moved.ok ? "" : moved.message);
        }
        await tx.execute({
          sql: "UPDATE payouts SET submission_count = 1 WHERE id = ?",
          args: [id],
        });
        // Offered above already: the create's own offer job has nothing left to do.
        await tx.execute({
          sql: "DELETE FROM scheduled_jobs WHERE kind = 'payout.offer' AND subject_id = ?",
          args: [id],
        });
        if (stage === "selected") return id;
        const sent = await applyMove(tx, id, { kind: "send" }, NOW, {
          detail: `${id}-1`,
          railReference: `${id}-1`,
        });
        assert.ok(sent.ok, sent.ok ? "" : sent.message);
        if (stage === "completed") {
          assert.ok((await applyMove(tx, id, { kind: "complete" }, NOW)).ok);
        }
        return id;
      });
      const trace = nextTrace();
      const sentCents = amountCents - FEES.payee;
      const entryId = await insertEntry({
        payoutId,
        direction: "credit",
        amountCents: sentCents,
        status: options.entryStatus ?? (stage === "completed" ? "completed" : "sent"),
        trace,
        routing,
        account,
        transactionCode: accountType === "savings" ? 32 : 22,
      });
      return { payoutId, entryId, trace, account, routing, sentCents };
    },
    async debit(amountCents, status = "sent") {
      const fundingId = await database.writer.write(async (tx) => {
        const added = await addFunds(
          tx,
          {
            companyId: COMPANY,
            lineId: LINE,
            paymentMethod: "ACH",
            amountCents,
            description: "ach funding",
            largeDisbursement: false,
            requestFingerprint: `ach${++sequence}`,
          },
          environment,
          NOW,
        );
        assert.ok(added.ok);
        return added.value.funding.id;
      });
      const trace = nextTrace();
      // The pipeline may have queued the funding's debit already: that entry is the one sent.
      const queued = await rows(
        "SELECT id FROM rail_batch_entries WHERE funding_id = ?",
        fundingId,
      );
      let entryId: string;
      if (queued.length > 0) {
        entryId = String(queued[0].id);
        await database.writer.write((tx) =>
          tx.execute({
            sql: `UPDATE rail_batch_entries SET batch_id = ?, status = ?, trace_number = ?,
                    receiving_dfi = ?, transaction_code = 27, entry_class = 'CCD' WHERE id = ?`,
            args: [batchId, status, trace, ODFI, entryId],
          })
        );
      } else {
        entryId = await insertEntry({
          fundingId,
          direction: "debit",
          amountCents,
          status,
          trace,
          routing: ROUTING,
          account: "000900000001",
          transactionCode: 27,
        });
      }
      // Its file went to the bank: the funding is pending in the ledger from now.
      await database.writer.write((tx) => recordAchDebitSent(tx, fundingId, NOW));
      return { fundingId, entryId, trace, amountCents };
    },
    import: (entries, fileName = "RETURNS.txt") =>
      importAchFile(deps, {
        content: new TextEncoder().encode(returnFile(entries)),
        fileName,
        source: "cli",
        importedBy: "op_admin",
      }, NOW),
    async snapshot() {
      return {
        payouts: await rows(
          "SELECT id, status, held_cents, failure_reason FROM payouts ORDER BY id",
        ),
        entries: await rows(
          "SELECT id, status, return_code FROM rail_batch_entries ORDER BY id",
        ),
        fundings: await rows("SELECT id, status FROM fundings ORDER BY id"),
        ledger: await rows("SELECT count(*) AS n FROM ledger_entries"),
        balances: await readLineBalances(database.readClient, LINE),
        imports: await rows("SELECT count(*) AS n FROM ach_imports"),
        corrections: await rows("SELECT count(*) AS n FROM ach_corrections"),
        notifications: await rows("SELECT count(*) AS n FROM notifications"),
        events: await rows("SELECT count(*) AS n FROM events"),
      };
    },
  };
  return fixture;
}

export function returnFile(entries: readonly ReturnToWrite[]): string {
  return buildReturnFile({
    immediateDestination: ROUTING,
    immediateOrigin: "1123456789",
    companyName: "ACME",
    companyIdentification: "1123456789",
    rdfi: "09100001",
    createdDate: "2026-11-24",
    createdTime: "0900",
    fileIdModifier: "A",
    entries,
  });
}

/** A return of a sent credit (defaults: what it was sent with), or of a debit. */
export function returnOf(
  sent: SentCredit | SentDebit,
  code: string,
  overrides: { amountCents?: number; routing?: string } = {},
): ReturnToWrite {
  const credit = "payoutId" in sent;
  return {
    kind: "return",
    code,
    original: {
      traceNumber: sent.trace,
      transactionCode: credit ? 22 : 27,
      routingNumber: overrides.routing ?? (credit ? sent.routing : ROUTING),
      accountNumber: credit ? sent.account : "000900000001",
      amountCents: overrides.amountCents ?? (credit ? sent.sentCents : sent.amountCents),
      individualId: credit ? sent.payoutId.slice(-15) : sent.fundingId.slice(-15),
      name: credit ? "PAT DOE" : "ACME",
      entryClass: credit ? "PPD" : "CCD",
    },
  };
}

export function noticeOf(sent: SentCredit, code: string, correction: Correction): ReturnToWrite {
  return { ...returnOf(sent, code), kind: "correction", correction };
}

/** Schedules a job of `kind` on the fixture's file, due now. */
export function scheduleFileJob(f: ImportFixture, kind: string): Promise<string> {
  return f.database.writer.write((tx) =>
    scheduleJob(tx, { companyId: COMPANY, kind, subjectId: f.batchId, dueAt: NOW }, NOW)
  );
}
