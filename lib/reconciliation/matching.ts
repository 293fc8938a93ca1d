/**
 * Matching a bank account's day (pure): what the service expects the bank to have posted, against
 * the lines the bank's statement reports. Each rule is a function that says why a line is an
 * expected move, or null; the rules run from the most specific to the least (a check by its
 * number, a return by its trace, before anything matched by amount alone), each expected move and
 * each line matched at most once. What is left on either side is an exception, with its reason.
 */
import { formatDollars } from "../platform/money.ts";
import type { StatementLine } from "./statement.ts";

/**
 * What the service expects on a statement:
 * - `ach_credit_file`: an ACH file's credits, one debit of their total on its effective date;
 * - `ach_debit_file`: an ACH file's funding debits, one credit of their total on that date;
 * - `ach_return`: each returned entry (a credit's money back, a funding debit taken back), before
 *   or after it completed;
 * - `check_paid`: each check the bank paid, by number and amount;
 * - `check_reversal`: a paid item the bank took back (a credit), by number and amount;
 * - `wire`: each wire funding received;
 * - `provider_settlement`: what a payment provider drew from the account (a PayPal batch's total,
 *   a virtual card's funding, an instant payment) or paid back to it (a card's unspent balance, an
 *   instant payment returned late);
 * - `unclaimed_remittance`: an unclaimed-property report remitted to a state, one debit of its
 *   total: the money the ledger moved out of the company's lines leaves the settlement account,
 *   paid to the state or moved to the account the company pays the state from.
 */
export const expectedKinds = [
  "ach_credit_file",
  "ach_debit_file",
  "ach_return",
  "check_paid",
  "check_reversal",
  "wire",
  "provider_settlement",
  "unclaimed_remittance",
] as const;
export type ExpectedKind = (typeof expectedKinds)[number];

export interface ExpectedMove {
  readonly kind: ExpectedKind;
  /** What it is in the service: a file's or batch's id, an entry, a check, a funding. */
  readonly subjectId: string;
  /** As the bank posts it to the company's account. */
  readonly direction: "credit" | "debit";
  readonly amountCents: number;
  /**
   * What the bank's line may name it by: a check number, a trace, a provider's batch, card or
   * transfer id.
   */
  readonly reference: string | null;
  /** What it is, in words: "ACH file rbt_… credits". */
  readonly description: string;
  /**
   * Matched when the bank reports it, no exception when it does not: a provider's settlement
   * touches the account only when the provider draws on it.
   */
  readonly optional?: boolean;
}

export interface MatchedLine {
  readonly lineIndex: number;
  readonly expected: ExpectedMove;
  readonly reason: string;
}

export interface UnmatchedLine {
  readonly lineIndex: number;
  readonly reason: string;
}

export interface UnmatchedExpected {
  readonly expected: ExpectedMove;
  readonly reason: string;
}

export interface DayReconciliation {
  readonly matched: readonly MatchedLine[];
  /** Lines the bank reported that the service did not expect. */
  readonly unmatchedLines: readonly UnmatchedLine[];
  /** Moves the service expected that the bank did not report. */
  readonly unmatchedExpected: readonly UnmatchedExpected[];
}

/** A rule: why `line` is `expected`, or null when it is not. */
export type MatchRule = (line: StatementLine, expected: ExpectedMove) => string | null;

const dollars = (cents: number) => formatDollars(cents);
const sameMoney = (line: StatementLine, expected: ExpectedMove) =>
  line.direction === expected.direction && line.amountCents === expected.amountCents;

/** A check number as the bank writes a serial: leading zeros do not count. */
export const checkSerial = (text: string | null): string | null => {
  const digits = text?.trim() ?? "";
  return /^\d{1,15}$/.test(digits) ? String(Number(digits)) : null;
};

/** Everything a line says, for finding a reference in it. */
const lineWords = (line: StatementLine) =>
  [line.bankReference ?? "", line.customerReference ?? "", line.text].join(" ");

/** A paid check: a debit carrying the check's number, for the check's amount. */
export const checkByNumber: MatchRule = (line, expected) => {
  if (expected.kind !== "check_paid" || line.kind === "ach" || line.kind === "wire") return null;
  if (!sameMoney(line, expected)) return null;
  const serial = checkSerial(line.customerReference) ?? checkSerial(line.bankReference);
  if (serial === null || serial !== checkSerial(expected.reference)) return null;
  return `check ${serial} paid for ${dollars(line.amountCents)}, as written`;
};

/** A paid item the bank took back: a credit carrying the check's number, for what it had paid. */
export const checkReversalByNumber: MatchRule = (line, expected) => {
  if (expected.kind !== "check_reversal" || line.kind === "ach" || line.kind === "wire") {
    return null;
  }
  if (!sameMoney(line, expected)) return null;
  const serial = checkSerial(line.customerReference) ?? checkSerial(line.bankReference);
  if (serial === null || serial !== checkSerial(expected.reference)) return null;
  return `the bank's payment of check ${serial} (${
    dollars(line.amountCents)
  }) came back, as resolved`;
};

/** A return: the returned entry's amount, with its trace named somewhere on the line. */
export const returnByTrace: MatchRule = (line, expected) => {
  if (expected.kind !== "ach_return" || expected.reference === null) return null;
  if (!sameMoney(line, expected) || !lineWords(line).includes(expected.reference)) return null;
  return `ACH return of trace ${expected.reference} for ${dollars(line.amountCents)}`;
};

/** A return item without the trace: an ACH return line of the same amount and direction. */
export const returnByAmount: MatchRule = (line, expected) => {
  if (expected.kind !== "ach_return" || line.kind !== "ach_return") return null;
  if (!sameMoney(line, expected)) return null;
  return `an ACH return item of ${
    dollars(line.amountCents)
  }, as ${expected.description} (no trace on the line)`;
};

/** An ACH file's total: banks post a file's credits (or debits) as one line on its effective date. */
export const achFileTotal: MatchRule = (line, expected) => {
  if (expected.kind !== "ach_credit_file" && expected.kind !== "ach_debit_file") return null;
  if (line.kind !== "ach" && line.kind !== "other") return null;
  if (!sameMoney(line, expected)) return null;
  const what = expected.kind === "ach_credit_file" ? "credits" : "funding debits";
  return `${expected.description}: its ${what} total of ${
    dollars(line.amountCents)
  } settled on its effective date`;
};

/** A wire received: a credit of the wire's amount, by a money-transfer line (or unclassified). */
export const wireByAmount: MatchRule = (line, expected) => {
  if (expected.kind !== "wire") return null;
  if (line.kind !== "wire" && line.kind !== "other") return null;
  if (!sameMoney(line, expected)) return null;
  return `incoming wire of ${dollars(line.amountCents)} for ${expected.description}`;
};

/**
 * A provider's settlement: what it drew (a batch's total, a card's funding, an instant payment)
 * or paid back, the provider's id of the batch, card or transfer named on the line.
 */
export const providerSettlement: MatchRule = (line, expected) => {
  if (expected.kind !== "provider_settlement" || expected.reference === null) return null;
  if (!sameMoney(line, expected) || !lineWords(line).includes(expected.reference)) return null;
  return `${expected.description}: ${line.direction === "debit" ? "drawn" : "paid back"}, ${
    dollars(line.amountCents)
  }, named on the line`;
};

/** A remittance to a state: a debit of the report's total, the report's id named on the line. */
export const remittanceByReport: MatchRule = (line, expected) => {
  if (expected.kind !== "unclaimed_remittance" || expected.reference === null) return null;
  if (!sameMoney(line, expected) || !lineWords(line).includes(expected.reference)) return null;
  return `${expected.description}: ${dollars(line.amountCents)}, named on the line`;
};

/**
 * A remittance by its amount alone: an ACH, money transfer or unclassified debit of the report's
 * total (a state's payment the bank describes in its own words).
 */
export const remittanceByAmount: MatchRule = (line, expected) => {
  if (expected.kind !== "unclaimed_remittance") return null;
  if (line.kind !== "ach" && line.kind !== "wire" && line.kind !== "other") return null;
  if (!sameMoney(line, expected)) return null;
  return `a debit of ${
    dollars(line.amountCents)
  }, as ${expected.description} (the report not named on the line)`;
};

/** The rules in the order they are tried: the most specific first. */
export const matchRules: readonly MatchRule[] = [
  checkByNumber,
  checkReversalByNumber,
  returnByTrace,
  providerSettlement,
  remittanceByReport,
  achFileTotal,
  wireByAmount,
  returnByAmount,
  remittanceByAmount,
];

/** Why a line nobody expected is an exception, naming a near miss when there is one. */
function unmatchedLineReason(line: StatementLine, left: readonly ExpectedMove[]): string {
  const base = `the bank reported a ${line.direction} of ${
    dollars(line.amountCents)
  } (${line.kind}, type ${line.typeCode}) the service did not expect`;
  const serial = checkSerial(line.customerReference);
  const sameCheck = line.kind === "check_paid" && serial !== null
    ? left.find((e) => e.kind === "check_paid" && checkSerial(e.reference) === serial)
    : undefined;
  if (sameCheck) {
    return `${base}: check ${serial} was written for ${dollars(sameCheck.amountCents)}`;
  }
  return base;
}

/** Matches a day's lines with the day's expected moves; every line and move ends up once. */
export function reconcileDay(
  lines: readonly StatementLine[],
  expected: readonly ExpectedMove[],
  rules: readonly MatchRule[] = matchRules,
): DayReconciliation {
  const lineTaken = new Array<boolean>(lines.length).fill(false);
  const expectedTaken = new Array<boolean>(expected.length).fill(false);
  const matched: MatchedLine[] = [];
  for (const rule of rules) {
    expected.forEach((move, e) => {
      if (expectedTaken[e]) return;
      for (let l = 0; l < lines.length; l++) {
        if (lineTaken[l]) continue;
        const reason = rule(lines[l], move);
        if (reason === null) continue;
        lineTaken[l] = expectedTaken[e] = true;
        matched.push({ lineIndex: l, expected: move, reason });
        return;
      }
    });
  }
  const left = expected.filter((move, e) => !expectedTaken[e] && !move.optional);
  matched.sort((a, b) => a.lineIndex - b.lineIndex);
  return {
    matched,
    unmatchedLines: lines.flatMap((line, lineIndex) =>
      lineTaken[lineIndex] ? [] : [{ lineIndex, reason: unmatchedLineReason(line, left) }]
    ),
    unmatchedExpected: left.map((move) => ({
      expected: move,
      reason: `the bank reported no ${move.direction} of ${
        dollars(move.amountCents)
      } for ${move.description}`,
    })),
  };
}
