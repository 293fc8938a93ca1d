/**
 * The ACH rail on the money fixture with a scripted bank: it answers uploads from a list (by
 * default "uploaded"), keeps what it was handed, and can run a test's crash after an upload.
 */
import type { Client, InStatement } from "@libsql/client";
import type { Database } from "../db/client.ts";
import { drizzleOver } from "../db/query_layer.ts";
import type { WriteTx, WriteUnit } from "../db/writer.ts";
import type { AchTransport } from "../lib/ach/rail.ts";
import type { UploadAnswer } from "../lib/ach/transport.ts";
import { importAchFile } from "../lib/ach/imports.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { testSecretBox } from "./helpers.ts";
import { returnFile, returnOf } from "./ach_import_helpers.ts";
import {
  MONEY_SETTINGS,
  moneyBatchDeps,
  type MoneyFixture,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";

/** The sandbox bank's first cutoff after the fixture's start: 10:30 New York, Monday 2026-01-05. */
export const FIRST_CUTOFF = START + 30 * 60_000;
/** Its second same-day cutoff, 14:45 New York. */
export const SECOND_CUTOFF = START + (4 * 60 + 45) * 60_000;

/** The file name the sandbox bank's settings give the fixture's company (TIN 123456789). */
export const fileNameOf = (date: string, modifier: string) =>
  `ACH_1123456789_${date.replaceAll("-", "")}_${modifier}.txt`;

/** What the scripted bank was handed (its bytes read as the text they are). */
export interface Upload {
  readonly fileName: string;
  readonly content: string;
  readonly accountNumbers: readonly string[];
  readonly attempt: number;
}

/** A bank that answers from `answers` (then "uploaded"), or throws what `failures` holds. */
export class ScriptedBank implements AchTransport {
  readonly received: Upload[] = [];
  readonly answers: (UploadAnswer | Error)[] = [];
  /** Runs after the bank took an upload (a test's crash). */
  afterUpload: (() => void) | null = null;

  uploads(): boolean {
    return true;
  }

  upload(
    _settings: unknown,
    file: { fileName: string; content: Uint8Array; accountNumbers: string[] },
    attempt: number,
  ): Promise<UploadAnswer> {
    this.received.push({ ...file, content: new TextDecoder().decode(file.content), attempt });
    const answer = this.answers.shift() ?? {
      kind: "uploaded",
      remotePath: `outbound/${file.fileName}`,
    };
    if (answer instanceof Error) return Promise.reject(answer);
    if (answer.kind === "uploaded") this.afterUpload?.();
    return Promise.resolve(answer);
  }
}

export interface AchFixture {
  readonly m: MoneyFixture;
  readonly bank: ScriptedBank;
  readonly clock: FakeClock;
}

/** The money fixture whose ACH files go to a scripted bank; real time is a fake clock. */
export async function withScriptedBank(
  fn: (fixture: AchFixture) => Promise<void>,
  options: {
    wrapDatabase?: (database: Database) => Database;
    /** Whether API requests are being answered, as the service's metrics say (never by default). */
    apiBusy?: () => boolean;
  } = {},
): Promise<void> {
  const clock = new FakeClock(START);
  const bank = new ScriptedBank();
  const m = await openMoneyFixture({
    clock,
    handlers: (database: Database) =>
      jobHandlersOf(
        "test",
        { ...MONEY_SETTINGS, rails: { achTransport: bank }, apiBusy: options.apiBusy },
        options.wrapDatabase?.(database) ?? database,
        testSecretBox,
      ),
  });
  try {
    await fn({ m, bank, clock });
  } finally {
    await m.close();
  }
}

/** Payouts of `amounts` whose payees chose ACH with `account`; returns their ids. */
export async function chooseAch(
  m: MoneyFixture,
  amounts: number[],
  account = "000123456789",
): Promise<string[]> {
  const created = await m.create(
    amounts.map((amountCents, i) => ({ payeeUuid: `p${i}`, amountCents })),
  );
  if (!created.ok) throw new Error(created.message);
  await m.settle();
  const ids = created.value.payouts.map((payout) => payout.id);
  for (const id of ids) {
    const selected = await m.select(id, 1, { accountNumber: account });
    if (!selected.ok) throw new Error(selected.message);
  }
  await m.settle();
  return ids;
}

export async function rows(m: MoneyFixture, sql: string, ...args: (string | number)[]) {
  return (await m.database.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));
}

export const entries = (m: MoneyFixture) =>
  rows(
    m,
    "SELECT payout_id, reference, amount_cents, status, batch_id FROM rail_batch_entries ORDER BY rowid",
  );

export const batches = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT id, rail, status, entry_count, total_cents, cutoff_at, rail_reference, transmitted_at, error
     FROM rail_batches ORDER BY rowid`,
  );

export const statuses = async (m: MoneyFixture, ids: string[]) =>
  await Promise.all(ids.map(async (id) => (await m.payout(id)).status));

/** Silences the log lines of a test's deliberate failures. */
export async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const original = console.error;
  console.error = () => {};
  try {
    return await fn();
  } finally {
    console.error = original;
  }
}

/** The log lines written while `fn` runs, instead of printed. */
export async function logLines(fn: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (line: string) => lines.push(line);
  try {
    await fn();
  } finally {
    console.error = original;
  }
  return lines;
}

/** Every write fails from the moment the bank took a file until `restart`, as after a crash. */
export function crashAfterUpload(m: MoneyFixture, bank: ScriptedBank): { restart(): void } {
  const writer = m.database.writer;
  const write = writer.write.bind(writer);
  let stopped = false;
  writer.write = <T>(unit: WriteUnit<T>): Promise<T> =>
    stopped ? Promise.reject(new Error("the process stopped")) : write(unit);
  bank.afterUpload = () => stopped = true;
  return {
    restart() {
      writer.write = write;
      bank.afterUpload = null;
    },
  };
}

/**
 * Imports the bank's return (R03) of a payout's sent entry (its id, trace_number and
 * amount_cents), as its return file names it.
 */
export function importReturnR03(
  m: MoneyFixture,
  payoutId: string,
  entry: Record<string, unknown>,
): ReturnType<typeof importAchFile> {
  return importAchFile(moneyBatchDeps(m.database, "test"), {
    content: new TextEncoder().encode(returnFile([returnOf({
      payoutId,
      entryId: String(entry.id),
      trace: String(entry.trace_number),
      account: "000123456789",
      routing: "021000021",
      sentCents: Number(entry.amount_cents),
    }, "R03")])),
    fileName: "returns.ach",
    source: "sftp",
    importedBy: null,
  }, m.now());
}

/** How a noted statement built by the query builder (drizzle) begins. */
export const BUILT_BY_QUERY_BUILDER = "/* query builder */ ";

/**
 * Makes the database's write units note every statement they run, drizzle's too (marked with
 * BUILT_BY_QUERY_BUILDER), one list per unit in `units`: in place, so that the scheduler's
 * claiming and recording units are noted too.
 */
export function notingUnits(database: Database, units: string[][]): Database {
  const noting = (tx: WriteTx, seen: string[]): WriteTx => {
    const noted = (mark: string) => (statement: InStatement) => {
      seen.push(mark + (typeof statement === "string" ? statement : statement.sql));
      return tx.execute(statement);
    };
    const execute = noted("");
    const built = noted(BUILT_BY_QUERY_BUILDER);
    const batch = async (statements: InStatement[]) => {
      const results = [];
      for (const statement of statements) results.push(await built(statement));
      return results;
    };
    const db = drizzleOver({ execute: built, batch } as unknown as Client);
    return new Proxy(tx, {
      get(target, property) {
        if (property === "execute") return execute;
        if (property === "db") return db;
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  const writer = database.writer;
  const write = writer.write.bind(writer);
  writer.write = <T>(unit: WriteUnit<T>) =>
    write((tx) => {
      const seen: string[] = [];
      units.push(seen);
      return unit(noting(tx, seen));
    });
  return database;
}

/** The database whose write units see each statement before it runs (`before` may refuse it). */
export function seeingStatements(
  database: Database,
  before: (sql: string, statement: InStatement) => void,
): Database {
  const seeing = (tx: WriteTx): WriteTx =>
    new Proxy(tx, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (property !== "execute") {
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (statement: InStatement) => {
          try {
            before(typeof statement === "string" ? statement : statement.sql, statement);
          } catch (error) {
            return Promise.reject(error);
          }
          return target.execute(statement);
        };
      },
    });
  const writer = new Proxy(database.writer, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property !== "write") return typeof value === "function" ? value.bind(target) : value;
      return <T>(unit: WriteUnit<T>) => target.write((tx) => unit(seeing(tx)));
    },
  });
  return { ...database, writer, readClient: database.readClient, read: database.read };
}

/**
 * Runs `fn` while a timer counts the event loop's turns (`turns()` answers the count so far), so
 * a test sees whether requests could be answered between two units.
 */
export async function countingTurns(fn: (turns: () => number) => Promise<void>): Promise<void> {
  let turns = 0;
  let counting = true;
  const counter = (async () => {
    while (counting) {
      turns += 1;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  })();
  try {
    await fn(() => turns);
  } finally {
    counting = false;
    await counter;
  }
}
