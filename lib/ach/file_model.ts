/**
 * What an ACH file holds (pure): the entries of one cutoff as NACHA batches (PPD credits to
 * persons, CCD credits to businesses, a CCD debit batch of the company's funding account), with
 * an offset entry per batch in a balanced file, and the file's name.
 */
import type { BankAccount, BankSettings } from "./bank_settings.ts";
import type { CutoffSlot } from "./cutoffs.ts";
import {
  type NachaBatch,
  type NachaEntry,
  type NachaFileModel,
  type OriginationCode,
  transliterate,
} from "./nacha.ts";

/** Payee types of Surface A that are businesses (VENDOR, AGENCY): their credits are CCD. */
export const BUSINESS_PAYEE_TYPE_IDS: readonly number[] = [2, 3];

/** One queued entry as a file carries it. */
export interface FileEntry {
  readonly id: string;
  readonly direction: "credit" | "debit";
  readonly amountCents: number;
  readonly traceNumber: string;
  readonly payoutId: string | null;
  readonly fundingId: string | null;
  readonly payeeTypeId: number | null;
  /** A /v1 payee's type (null for a Surface A payee, whose payeeTypeId says it). */
  readonly payeeType: "individual" | "business" | null;
  /** The payee's name as the company gave it. */
  readonly payeeName: string;
}

/** A receiving account as a file entry needs it. */
export interface ReceivingAccount {
  readonly routingNumber: string;
  readonly accountNumber: string;
  readonly accountType: "checking" | "savings";
}

/** One entry of a file, with the account it goes to (after notices of change). */
export interface FileLine {
  readonly entry: FileEntry;
  readonly account: ReceivingAccount;
}

const creditCode = (account: { accountType: string }): OriginationCode =>
  account.accountType === "savings" ? 32 : 22;
const debitCode = (account: { accountType: string }): OriginationCode =>
  account.accountType === "savings" ? 37 : 27;

/** The entry class of a line: CCD for businesses and the company's own account, PPD for persons. */
export function entryClassOf(entry: FileEntry): "PPD" | "CCD" {
  if (entry.direction === "debit") return "CCD";
  const business = entry.payeeType === "business" ||
    (entry.payeeTypeId !== null && BUSINESS_PAYEE_TYPE_IDS.includes(entry.payeeTypeId));
  return business ? "CCD" : "PPD";
}

/** The NACHA code of a line. */
export function transactionCodeOf(line: FileLine): OriginationCode {
  return line.entry.direction === "credit" ? creditCode(line.account) : debitCode(line.account);
}

/** At most 15 characters of an id: its tail, which is its random part. */
const individualIdOf = (id: string) => id.slice(-15);

/** What a file holds: its model and the traces of its offset entries (not in the database). */
export interface FileModel {
  readonly model: NachaFileModel;
  readonly offsetTraces: ReadonlySet<string>;
}

/**
 * The file of one cutoff: PPD and CCD credits to payees, a CCD debit batch of the funding
 * account for fundings; a balanced file gives each batch an offset entry to the settlement
 * account. `offsetTrace(i)` numbers the offsets from the traces reserved for them.
 */
export function fileModelOf(
  settings: BankSettings,
  header: {
    slot: CutoffSlot;
    created: { date: string; time: string };
    fileIdModifier: string;
    offsetTrace: (index: number) => string;
  },
  lines: readonly FileLine[],
): FileModel {
  const odfi = settings.odfiRouting.slice(0, 8);
  const offsetTraces = new Set<string>();
  const toEntry = (line: FileLine): NachaEntry => ({
    transactionCode: transactionCodeOf(line),
    routingNumber: line.account.routingNumber,
    accountNumber: line.account.accountNumber,
    amountCents: line.entry.amountCents,
    individualId: individualIdOf(line.entry.payoutId ?? line.entry.fundingId!),
    name: line.entry.direction === "debit" ? settings.fundingAccount.name : line.entry.payeeName,
    traceNumber: line.entry.traceNumber,
  });
  const offset = (
    account: BankAccount,
    direction: "credit" | "debit",
    amountCents: number,
  ): NachaEntry => {
    const traceNumber = header.offsetTrace(offsetTraces.size);
    offsetTraces.add(traceNumber);
    return {
      transactionCode: direction === "credit" ? creditCode(account) : debitCode(account),
      routingNumber: account.routingNumber,
      accountNumber: account.accountNumber,
      amountCents,
      individualId: "OFFSET",
      name: account.name,
      traceNumber,
    };
  };
  const batches: NachaBatch[] = [];
  const batchOf = (
    entryClass: "PPD" | "CCD",
    description: string,
    chosen: readonly FileLine[],
    direction: "credit" | "debit",
  ) => {
    if (chosen.length === 0) return;
    const entries = chosen.map(toEntry);
    if (settings.balancedFile) {
      const total = chosen.reduce((sum, line) => sum + line.entry.amountCents, 0);
      // Credits to payees settle against a debit of the settlement account, and the reverse.
      entries.push(
        offset(settings.settlementAccount, direction === "credit" ? "debit" : "credit", total),
      );
    }
    batches.push({
      entryClass,
      companyEntryDescription: description,
      effectiveDate: header.slot.effectiveDate,
      entries,
    });
  };
  const credits = lines.filter((line) => line.entry.direction === "credit");
  batchOf("PPD", "CLAIM PAY", credits.filter((l) => entryClassOf(l.entry) === "PPD"), "credit");
  batchOf("CCD", "CLAIM PAY", credits.filter((l) => entryClassOf(l.entry) === "CCD"), "credit");
  batchOf("CCD", "FUNDING", lines.filter((l) => l.entry.direction === "debit"), "debit");
  return {
    model: {
      immediateDestination: settings.immediateDestination,
      immediateDestinationName: settings.immediateDestinationName,
      immediateOrigin: settings.immediateOrigin,
      immediateOriginName: settings.immediateOriginName,
      companyName: transliterate(settings.companyName, 16),
      companyIdentification: settings.companyIdentification,
      odfi,
      createdDate: header.created.date,
      createdTime: header.created.time,
      fileIdModifier: header.fileIdModifier,
      batches,
    },
    offsetTraces,
  };
}

/** The file's name: the origin, the bank-local date and the modifier. */
export function achFileName(origin: string, bankDate: string, modifier: string): string {
  return `${achFileNamePrefix(origin, bankDate)}${modifier}.txt`;
}

/** The part of a file name shared by the day's files of one origin. */
export function achFileNamePrefix(origin: string, bankDate: string): string {
  return `ACH_${origin.trim()}_${bankDate.replaceAll("-", "")}_`;
}
