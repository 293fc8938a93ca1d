/**
 * Writes a BAI2 prior-day file of one group (what the sandbox bank delivers), with every trailer's
 * control total and record count computed as the reader checks them. Pure.
 */
import { BAI_CLOSING_LEDGER, BAI_OPENING_LEDGER } from "./bai2.ts";
import type { StatementAccount } from "./statement.ts";

export interface Bai2FileHeader {
  readonly senderId: string;
  readonly receiverId: string;
  /** YYYY-MM-DD and HHMM the file was created. */
  readonly createdDate: string;
  readonly createdTime: string;
  readonly fileId: string;
  /** The accounts' as-of date, YYYY-MM-DD. */
  readonly asOfDate: string;
}

const yymmdd = (date: string) => date.slice(2).replaceAll("-", "");
const pad3 = (code: number) => String(code).padStart(3, "0");

/** The BAI2 text of `accounts` (their `date` is the group's as-of date); lines end with LF. */
export function writeBai2(
  header: Bai2FileHeader,
  accounts: readonly Omit<StatementAccount, "line" | "date">[],
): string {
  const group: string[] = [];
  let groupControl = 0;
  for (const account of accounts) {
    const summaries: string[] = [];
    let control = 0;
    for (
      const [code, cents] of [
        [BAI_OPENING_LEDGER, account.openingCents],
        [BAI_CLOSING_LEDGER, account.closingCents],
      ] as const
    ) {
      if (cents === null) continue;
      summaries.push(`${pad3(code)},${cents},,`);
      control += cents;
    }
    const records = [
      `03,${account.accountNumber},USD,${summaries.join(",")}${summaries.length ? "," : ""}/`,
    ];
    for (const line of account.lines) {
      records.push(
        `16,${line.typeCode},${line.amountCents},Z,${line.bankReference ?? ""},${
          line.customerReference ?? ""
        },${line.text}`,
      );
      control += line.amountCents;
    }
    records.push(`49,${control},${records.length + 1}/`);
    group.push(...records);
    groupControl += control;
  }
  const lines = [
    `01,${header.senderId},${header.receiverId},${
      yymmdd(header.createdDate)
    },${header.createdTime},${header.fileId},,,2/`,
    `02,${header.receiverId},${header.senderId},1,${yymmdd(header.asOfDate)},2400,USD,2/`,
    ...group,
    `98,${groupControl},${accounts.length},${group.length + 2}/`,
  ];
  lines.push(`99,${groupControl},1,${lines.length + 1}/`);
  return lines.join("\n") + "\n";
}
