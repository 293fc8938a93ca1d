/**
 * The ledger's signed daily statements (lib/ledger/trial_balance.ts) at rest: closing the days of
 * every line that ended since its last statement, and verifying every stored day against the
 * ledger entries, the chain and the signatures. A line's days are its company's bank days (the
 * bank settings' time zone, New York by default), from the day of its first entry.
 */
import type { Database } from "../../db/client.ts";
import { type UpkeepStep, yieldToEventLoop } from "../../db/scheduler.ts";
import type { SqlReader } from "../../db/writer.ts";
import { bankLocal, bankTime } from "../ach/cutoffs.ts";
import { TIME_ZONE_DEFAULT } from "../ach/bank_settings.ts";
import { readBankSettings } from "../ach/bank_store.ts";
import type { Ed25519Keys } from "../audit/anchor.ts";
import type { Clock } from "../platform/clock.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { newId } from "../platform/keys.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { isLedgerTransactionKind } from "./postings.ts";
import {
  type AccountMovement,
  LEDGER_STATEMENT_GENESIS,
  type LedgerStatementBody,
  signStatement,
  statementBody,
  statementDifference,
  statementHash,
  statementSigned,
} from "./trial_balance.ts";
import { type LedgerAccountCode, ledgerAccountCodes } from "./types.ts";

/** One run closes at most this many days of a line; the next run goes on. */
export const LEDGER_STATEMENT_DAYS_PER_RUN_MAX = 366;

export interface LedgerStatementDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly keys: Ed25519Keys;
}

/** A statement as written: its line, day, hash and the text that was signed. */
export interface StoredStatement {
  readonly lineId: string;
  readonly line: string;
  readonly date: string;
  readonly seq: number;
  readonly body: string;
  readonly prevHash: string;
  readonly hash: string;
  readonly signature: string;
}

const nextDate = (date: string) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

async function lines(reader: SqlReader) {
  const { rows } = await reader.execute(
    "SELECT id, company_id, code FROM business_lines ORDER BY created_at, id",
  );
  return rows.map((r) => ({
    id: String(r.id),
    companyId: String(r.company_id),
    code: String(r.code),
  }));
}

type Openings = Partial<Record<LedgerAccountCode, number>>;

/**
 * Transactions one read of a day's movements sums: a day of a large cutoff (tens of thousands of
 * transactions) summed in one read held the service's thread about 13 ms per 10,000.
 */
export const LEDGER_MOVEMENTS_PAGE_TRANSACTIONS = 1_000;

const codeOf = (value: unknown): LedgerAccountCode => {
  const text = String(value);
  if (!(ledgerAccountCodes as readonly string[]).includes(text)) {
    throw new Error(`ledger account code ${text} is not known`);
  }
  return text as LedgerAccountCode;
};

/** The line's opening balances at `start` and its movements in [start, end). */
async function dayOf(
  reader: SqlReader,
  lineId: string,
  window: { start: number; end: number },
): Promise<{ openings: Openings; movements: AccountMovement[] }> {
  return {
    openings: await openingsAt(reader, lineId, window.start),
    movements: await dayMovements(reader, lineId, window),
  };
}

/**
 * The line's movements in [start, end) of a day that is over (its entries no longer change),
 * summed LEDGER_MOVEMENTS_PAGE_TRANSACTIONS transactions at a time with the event loop's turns
 * between reads.
 */
async function dayMovements(
  reader: SqlReader,
  lineId: string,
  window: { start: number; end: number },
): Promise<AccountMovement[]> {
  const sums = new Map<string, AccountMovement>();
  for (let from = window.start; from < window.end;) {
    const { rows: [bound] } = await reader.execute({
      sql: `SELECT posted_at FROM ledger_transactions
             WHERE line_id = ? AND posted_at >= ? AND posted_at < ?
             ORDER BY posted_at LIMIT 1 OFFSET ?`,
      args: [lineId, from, window.end, LEDGER_MOVEMENTS_PAGE_TRANSACTIONS],
    });
    // A page ends before the first transaction past it, after at least one millisecond.
    const to = bound ? Math.max(Number(bound.posted_at), from + 1) : window.end;
    const moved = await reader.execute({
      sql: `SELECT a.code, t.kind, sum(e.amount_cents) AS cents FROM ledger_entries e
              JOIN ledger_transactions t ON t.id = e.transaction_id
              JOIN ledger_accounts a ON a.id = e.account_id
             WHERE t.line_id = ? AND t.posted_at >= ? AND t.posted_at < ?
             GROUP BY a.code, t.kind`,
      args: [lineId, from, to],
    });
    for (const r of moved.rows) {
      const kind = String(r.kind);
      if (!isLedgerTransactionKind(kind)) {
        throw new Error(`ledger transaction kind ${kind} is not known`);
      }
      const code = codeOf(r.code);
      const key = `${code} ${kind}`;
      const cents = (sums.get(key)?.cents ?? 0) + Number(r.cents);
      sums.set(key, { code, kind, cents });
    }
    from = to;
    if (from < window.end) await yieldToEventLoop();
  }
  return [...sums.values()];
}

async function openingsAt(
  reader: SqlReader,
  lineId: string,
  start: number,
): Promise<Openings> {
  const opened = await reader.execute({
    sql: `SELECT a.code, coalesce(sum(e.amount_cents), 0) AS cents FROM ledger_entries e
            JOIN ledger_transactions t ON t.id = e.transaction_id
            JOIN ledger_accounts a ON a.id = e.account_id
           WHERE t.line_id = ? AND t.posted_at < ? GROUP BY a.code`,
    args: [lineId, start],
  });
  return Object.fromEntries(opened.rows.map((r) => [codeOf(r.code), Number(r.cents)]));
}

/**
 * A day's closing balances, the next day's openings: a statement chain carries them from day to
 * day, so closing a day reads only that day's entries, not every entry before it (a large line's
 * history held the service's thread 17 to 18 ms at each day's close). Verification still derives
 * every day's openings from the entries.
 */
const closingsOf = (body: LedgerStatementBody): Openings =>
  Object.fromEntries(body.accounts.map((account) => [account.code, account.closing_cents]));

const dayWindow = (date: string, timeZone: string) => ({
  start: bankTime(date, "00:00", timeZone),
  end: bankTime(nextDate(date), "00:00", timeZone),
});

/** A line's next day to state (after its last statement, or its first entry's), or null. */
async function nextDay(
  reader: SqlReader,
  deps: LedgerStatementDeps,
  line: { id: string; companyId: string },
) {
  const { rows: [last] } = await reader.execute({
    sql: `SELECT statement_date, seq, hash, body FROM ledger_statements
           WHERE line_id = ? ORDER BY seq DESC LIMIT 1`,
    args: [line.id],
  });
  const lastBody = last ? JSON.parse(String(last.body)) as LedgerStatementBody : null;
  const timeZone = lastBody
    ? lastBody.time_zone
    : (await readBankSettings(reader, deps.secretBox, deps.environment, line.companyId))
      ?.timeZone ?? TIME_ZONE_DEFAULT;
  let date: string;
  if (last) {
    date = nextDate(String(last.statement_date));
  } else {
    const { rows: [first] } = await reader.execute({
      sql: "SELECT min(posted_at) AS at FROM ledger_transactions WHERE line_id = ?",
      args: [line.id],
    });
    // A line with no entry yet has no day to state.
    if (first.at === null) return null;
    date = bankLocal(Number(first.at), timeZone).date;
  }
  return { last, lastBody, date, timeZone, window: dayWindow(date, timeZone) };
}

/**
 * Writes the statements of every line's days that closed since its last one (each day in a unit of
 * its own, the reads that decide it inside); returns those written. A day closes on its company's
 * clock: the sandbox clock in test, where entries are dated by it.
 */
export async function closeLedgerDays(
  deps: LedgerStatementDeps,
  realNow: number,
): Promise<StoredStatement[]> {
  const written: StoredStatement[] = [];
  for (const line of await lines(deps.database.readClient)) {
    const now = await domainNow(deps.database, line.companyId, realNow);
    for (let day = 0; day < LEDGER_STATEMENT_DAYS_PER_RUN_MAX; day++) {
      // A committed read spares a write unit for each line whose day is still open (the scheduler
      // asks at every sweep); the unit decides again.
      const due = await nextDay(deps.database.readClient, deps, line);
      if (due === null || due.window.end > now) break;
      // The day is over, so its entries no longer change: they are summed before its unit.
      const movements = await dayMovements(deps.database.readClient, line.id, due.window);
      const statement = await deps.database.writer.write(async (tx) => {
        const next = await nextDay(tx, deps, line);
        // Another run stated the day meanwhile.
        if (next === null || next.date !== due.date || next.window.end > now) return null;
        const { last, lastBody, date, timeZone, window } = next;
        const body = statementBody({
          companyId: line.companyId,
          lineId: line.id,
          line: line.code,
          date,
          timeZone,
          seq: last ? Number(last.seq) + 1 : 1,
          prevHash: last ? String(last.hash) : LEDGER_STATEMENT_GENESIS,
          openings: lastBody ? closingsOf(lastBody) : await openingsAt(tx, line.id, window.start),
          movements,
        });
        const signed = signStatement(body, deps.keys.signingKey);
        await tx.execute({
          sql: `INSERT INTO ledger_statements (id, company_id, line_id, statement_date, seq, body,
                  prev_hash, hash, signature, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          args: [
            newId("lst"),
            line.companyId,
            line.id,
            date,
            body.seq,
            signed.body,
            body.prev_hash,
            signed.hash,
            signed.signature,
            realNow,
          ],
        });
        return {
          lineId: line.id,
          line: line.code,
          date,
          seq: body.seq,
          body: signed.body,
          prevHash: body.prev_hash,
          hash: signed.hash,
          signature: signed.signature,
        };
      });
      if (statement === null) break;
      written.push(statement);
    }
  }
  return written;
}

/**
 * The scheduler's upkeep step that closes each line's days shortly after its bank day's midnight,
 * with no backup and no command: every sweep asks, and a day closed once is never closed again.
 */
export function ledgerDayClosing(
  deps: Omit<LedgerStatementDeps, "database" | "environment">,
  clock: Clock,
): UpkeepStep {
  return {
    name: "ledger days",
    run: (database) =>
      closeLedgerDays({ ...deps, database, environment: database.environment }, clock.now()),
  };
}

/** The first thing wrong with a line's statements: its day and why. */
export interface StatementProblem {
  readonly lineId: string;
  readonly line: string;
  readonly date: string;
  readonly seq: number;
  readonly reason: string;
}

/**
 * Checks every stored statement: each line's chain (sequence, previous hash), each statement's
 * hash and signature under `publicKey`, and each day re-derived from the ledger entries. Reports
 * the first problem of each line; returns the number of statements checked.
 */
export async function verifyLedgerStatements(
  database: Database,
  publicKey: Ed25519Keys["publicKey"],
): Promise<{ checked: number; problems: StatementProblem[] }> {
  const reader = database.readClient;
  const problems: StatementProblem[] = [];
  let checked = 0;
  for (const line of await lines(reader)) {
    const { rows } = await reader.execute({
      sql: `SELECT statement_date, seq, body, prev_hash, hash, signature FROM ledger_statements
             WHERE line_id = ? ORDER BY seq`,
      args: [line.id],
    });
    let previous: Previous | null = null;
    for (const row of rows) {
      checked++;
      const date = String(row.statement_date);
      const seq = Number(row.seq);
      const problem = (reason: string) => ({ lineId: line.id, line: line.code, date, seq, reason });
      const text = String(row.body);
      const found = checkOne(text, row, previous, seq, publicKey);
      if (found !== null) {
        problems.push(problem(found));
        break;
      }
      const stored = JSON.parse(text) as LedgerStatementBody;
      const derived = statementBody({
        companyId: stored.company_id,
        lineId: line.id,
        line: stored.line,
        date: stored.date,
        timeZone: stored.time_zone,
        seq: stored.seq,
        prevHash: stored.prev_hash,
        ...await dayOf(reader, line.id, dayWindow(stored.date, stored.time_zone)),
      });
      const difference = statementDifference(stored, derived);
      if (difference !== null) {
        problems.push(problem(`the ledger entries of ${date} were rewritten: ${difference}`));
        break;
      }
      previous = { hash: String(row.hash), date, seq };
    }
  }
  return { checked, problems };
}

/** The statement checked before, in its line's chain. */
interface Previous {
  readonly hash: string;
  readonly date: string;
  readonly seq: number;
}

function checkOne(
  text: string,
  row: Record<string, unknown>,
  previous: Previous | null,
  seq: number,
  publicKey: Ed25519Keys["publicKey"],
): string | null {
  const expectedSeq = previous === null ? 1 : previous.seq + 1;
  if (seq !== expectedSeq) return `the chain goes from ${expectedSeq - 1} to ${seq}`;
  const prevHash = previous?.hash ?? LEDGER_STATEMENT_GENESIS;
  if (String(row.prev_hash) !== prevHash) {
    return "its previous hash is not the hash of the day before: the chain was broken";
  }
  if (statementHash(text) !== String(row.hash)) return "its text does not hash to its hash";
  if (!statementSigned(publicKey, String(row.hash), String(row.signature))) {
    return "its signature does not verify with the public key";
  }
  const body = JSON.parse(text) as LedgerStatementBody;
  if (body.prev_hash !== prevHash || body.seq !== seq || body.date !== String(row.statement_date)) {
    return "its text names another place in the chain";
  }
  if (previous !== null && body.date !== nextDate(previous.date)) {
    return `it follows ${previous.date}: a day is missing`;
  }
  return null;
}

/**
 * Writes statements as files into `dir/<environment>/` (mode 0600), one per line and day, each
 * the signed text with its hash and signature: a copy a rewrite of the database cannot reach.
 */
export async function writeLedgerStatementFiles(
  dir: string,
  environment: Environment,
  statements: readonly StoredStatement[],
): Promise<string[]> {
  if (statements.length === 0) return [];
  const into = `${dir}/${environment}`;
  await Deno.mkdir(into, { recursive: true, mode: 0o700 });
  const paths: string[] = [];
  for (const s of statements) {
    const path = `${into}/${s.lineId}-${s.date}.json`;
    const file = {
      statement: JSON.parse(s.body),
      hash: s.hash,
      signature: s.signature,
    };
    await Deno.writeTextFile(path, JSON.stringify(file, null, 2) + "\n", { mode: 0o600 });
    paths.push(path);
  }
  return paths;
}
