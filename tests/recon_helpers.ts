/**
 * Shared fixtures of the reconciliation tests: a money fixture whose sandbox bank states its days
 * (leaving out or adding what a test says), and a bank's BAI2 prior-day statement written from
 * lines, imported as a company's own file.
 */
import type { Clock } from "../lib/platform/clock.ts";
import { jobHandlersOf, type RailOptions } from "../lib/payouts/runtime.ts";
import { writeBai2 } from "../lib/reconciliation/bai2_writer.ts";
import {
  SANDBOX_STATEMENT_JOB,
  type SandboxStatementDeps,
  sandboxStatementJob,
} from "../lib/reconciliation/sandbox_statements.ts";
import { importStatement } from "../lib/reconciliation/service.ts";
import { kindOfBaiTypeCode, type StatementAccount } from "../lib/reconciliation/statement.ts";
import { testSecretBox } from "./helpers.ts";
import { MONEY_SETTINGS, type MoneyFixture, openMoneyFixture } from "./money_core_helpers.ts";

/**
 * The money fixture with the sandbox's job handlers, its sandbox bank stating each day with the
 * differences `inject` adds and the moves `omit` leaves out; `rails` and `clock` as the fixture's.
 */
export function openStatedMoneyFixture(
  options: Pick<SandboxStatementDeps, "inject" | "omit"> & {
    readonly clock?: Clock;
    readonly rails?: RailOptions;
  } = {},
): Promise<MoneyFixture> {
  return openMoneyFixture({
    clock: options.clock,
    handlers: (database) => ({
      ...jobHandlersOf(
        "test",
        options.rails ? { ...MONEY_SETTINGS, rails: options.rails } : MONEY_SETTINGS,
        database,
        testSecretBox,
      ),
      [SANDBOX_STATEMENT_JOB]: sandboxStatementJob({
        database,
        environment: "test",
        secretBox: testSecretBox,
        inject: options.inject,
        omit: options.omit,
      }),
    }),
  });
}

/** A line of a bank's statement: its BAI2 type code (a credit below 400), cents, reference, text. */
export type BankLine = readonly [
  typeCode: string,
  cents: number,
  customerReference: string | null,
  text: string,
];

/** One account's day on a statement, its closing balance its opening plus its lines. */
export function statementAccount(
  accountNumber: string,
  openingCents: number,
  lines: readonly BankLine[],
): Omit<StatementAccount, "line" | "date"> {
  const read = lines.map(([typeCode, amountCents, customerReference, text]) => ({
    line: 0,
    direction: Number(typeCode) < 400 ? "credit" as const : "debit" as const,
    amountCents,
    typeCode,
    kind: kindOfBaiTypeCode(Number(typeCode)),
    bankReference: null,
    customerReference,
    text,
  }));
  const net = read.reduce(
    (s, l) => s + (l.direction === "credit" ? l.amountCents : -l.amountCents),
    0,
  );
  return { accountNumber, openingCents, closingCents: openingCents + net, lines: read };
}

/** A bank's BAI2 prior-day statement of `date`, written that evening. */
export function bai2Statement(
  date: string,
  accounts: readonly Omit<StatementAccount, "line" | "date">[],
  fileId = "1",
): Uint8Array {
  return new TextEncoder().encode(writeBai2({
    senderId: "021000021",
    receiverId: "ACME",
    createdDate: date,
    createdTime: "2300",
    fileId,
    asOfDate: date,
  }, accounts));
}

/** Imports a statement file into the fixture's company as an operator's (`cli`), at its now. */
export function importBankStatement(
  m: MoneyFixture,
  content: Uint8Array,
): ReturnType<typeof importStatement> {
  return importStatement({ database: m.database, environment: "test", secretBox: testSecretBox }, {
    companyId: m.companyId,
    content,
    fileName: "prior_day.bai",
    source: "cli",
    importedBy: null,
  }, m.now());
}
