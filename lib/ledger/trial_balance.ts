/**
 * The signed daily trial balance of a business line (pure): at each bank day's close, a statement
 * of every account of the line (its opening balance, its movements by kind of transaction, its
 * closing balance), carrying the previous day's hash, so the days form a chain, and an ed25519
 * signature with a key kept outside the database. Anyone holding the public key and the ledger
 * entries can re-derive each day and check that none was rewritten.
 */
import { Buffer } from "node:buffer";
import { createHash, type KeyObject, sign, verify } from "node:crypto";
import { canonicalJson } from "../audit/rules.ts";
import { type LedgerAccountCode, ledgerAccountCodes } from "./types.ts";

export const LEDGER_STATEMENT_FORMAT = "ledger-statement/1";
/** A line's first statement chains from this value. */
export const LEDGER_STATEMENT_GENESIS = "0".repeat(64);

export interface AccountDay {
  readonly code: LedgerAccountCode;
  readonly opening_cents: number;
  /** The day's net change of the account per kind of transaction, kinds sorted. */
  readonly movements: Readonly<Record<string, number>>;
  readonly closing_cents: number;
}

/** What a day's statement says; its canonical JSON is what is hashed and stored. */
export interface LedgerStatementBody {
  readonly format: typeof LEDGER_STATEMENT_FORMAT;
  readonly company_id: string;
  readonly line_id: string;
  readonly line: string;
  /** The bank day, YYYY-MM-DD in `time_zone`. */
  readonly date: string;
  readonly time_zone: string;
  readonly seq: number;
  readonly prev_hash: string;
  readonly accounts: readonly AccountDay[];
}

/** A movement of one account on the day, by kind. */
export interface AccountMovement {
  readonly code: LedgerAccountCode;
  readonly kind: string;
  readonly cents: number;
}

/** The day's statement from the opening balances and the day's movements. */
export function statementBody(input: {
  companyId: string;
  lineId: string;
  line: string;
  date: string;
  timeZone: string;
  seq: number;
  prevHash: string;
  openings: Readonly<Partial<Record<LedgerAccountCode, number>>>;
  movements: readonly AccountMovement[];
}): LedgerStatementBody {
  const accounts = ledgerAccountCodes.map((code): AccountDay => {
    const opening = input.openings[code] ?? 0;
    const mine = input.movements.filter((m) => m.code === code && m.cents !== 0)
      .sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
    const movements: Record<string, number> = {};
    for (const m of mine) movements[m.kind] = (movements[m.kind] ?? 0) + m.cents;
    const net = mine.reduce((sum, m) => sum + m.cents, 0);
    return { code, opening_cents: opening, movements, closing_cents: opening + net };
  });
  const sum = accounts.reduce((total, a) => total + a.closing_cents, 0);
  // Every transaction sums to zero, so a line's balances always do.
  if (sum !== 0) throw new Error(`a line's closing balances sum to ${sum}, not 0`);
  return {
    format: LEDGER_STATEMENT_FORMAT,
    company_id: input.companyId,
    line_id: input.lineId,
    line: input.line,
    date: input.date,
    time_zone: input.timeZone,
    seq: input.seq,
    prev_hash: input.prevHash,
    accounts,
  };
}

/** The SHA-256 (hex) of a statement's canonical text. */
export function statementHash(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export interface SignedStatement {
  readonly body: string;
  readonly hash: string;
  /** ed25519 over the hash's hex text, base64. */
  readonly signature: string;
}

/** The statement's canonical text, its hash and its signature. */
export function signStatement(body: LedgerStatementBody, signingKey: KeyObject): SignedStatement {
  const text = canonicalJson(body);
  const hash = statementHash(text);
  return {
    body: text,
    hash,
    signature: sign(null, Buffer.from(hash), signingKey).toString("base64"),
  };
}

/** Whether `signature` is this key's signature of `hash`. */
export function statementSigned(publicKey: KeyObject, hash: string, signature: string): boolean {
  return verify(null, Buffer.from(hash), publicKey, Buffer.from(signature, "base64"));
}

/**
 * How a stored statement differs from the one the ledger entries give now (null: the same): the
 * first account and kind whose figure changed.
 */
export function statementDifference(
  stored: LedgerStatementBody,
  derived: LedgerStatementBody,
): string | null {
  for (const account of derived.accounts) {
    const was = stored.accounts.find((a) => a.code === account.code);
    if (!was) return `${account.code} is missing from the statement`;
    if (was.opening_cents !== account.opening_cents) {
      return `${account.code} opened at ${was.opening_cents} cents, the entries give ${account.opening_cents}`;
    }
    const kinds = [...new Set([...Object.keys(was.movements), ...Object.keys(account.movements)])]
      .sort();
    for (const kind of kinds) {
      const a = was.movements[kind] ?? 0;
      const b = account.movements[kind] ?? 0;
      if (a !== b) return `${account.code} moved ${a} cents by ${kind}, the entries give ${b}`;
    }
  }
  return canonicalJson(stored) === canonicalJson(derived) ? null : "the statement's fields differ";
}
