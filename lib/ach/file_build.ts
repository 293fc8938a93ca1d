/**
 * The build of one cutoff's claimed NACHA file, outside every write unit: the batch's entries are
 * read with the accounts they go to (unsealed, corrected by notices of change), the file is built
 * and read back by the strict checker, and its entry count, totals and entry hash must be what the
 * database says of the entries; otherwise it is not released. A large file is built in a worker
 * (file_worker.ts) that reads the database itself, so that a catastrophe day's 10,000 entries
 * never hold the service's thread; a small one here.
 */
import { type SqlReader } from "../../db/writer.ts";
import { SecretBox } from "../platform/crypto.ts";
import { sha256Hex } from "../platform/keys.ts";
import type { SandboxScenario } from "../rails/seam.ts";
import { sandboxTestDetails } from "../rails/sandbox.ts";
import type { BankSettings } from "./bank_settings.ts";
import { correctedAccount } from "./corrections.ts";
import { bankLocal, type CutoffSlot, settlementAt } from "./cutoffs.ts";
import {
  entryClassOf,
  type FileLine,
  fileModelOf,
  type ReceivingAccount,
  transactionCodeOf,
} from "./file_model.ts";
import {
  type AchFileRow,
  entriesForFile,
  type EntryFacts,
  type EntryForFile,
  hasCorrections,
  openFileContent,
  sealFileContent,
} from "./files_store.ts";
import { buildNachaFile, checkNachaFile } from "./nacha.ts";
import { entryAccountNumbers } from "./nacha_records.ts";
import { openAsBuilt } from "../rails/kept_file.ts";

/** What a cutoff's claim hands to its build. */
export interface FileClaim {
  readonly batchId: string;
  readonly companyId: string;
  readonly slot: CutoffSlot;
  readonly settings: BankSettings;
  readonly fileName: string;
  readonly fileIdModifier: string;
  /** The first trace sequence of the batch's reserved range not yet given to an entry. */
  readonly firstSequence: number;
}

/**
 * Entries whose facts (and sandbox accounts) one unit records: 200 hold the service's thread about
 * 2.6 ms of its CPU at load 10 (a whole catastrophe day's file in one unit, 80 ms); 100 held it 1.75
 * ms, but twice as many commits made the file's build slower (see CLAIM_ENTRIES_PER_UNIT_MAX).
 */
export const RECORD_ENTRIES_PER_UNIT_MAX = 200;

/** One recording unit's share of a built file, as JSON arrays its statements read. */
export interface RecordPage {
  /** The entries' facts (EntryFacts). */
  readonly facts: string;
  /** The sandbox test accounts chosen among them (SandboxAccountChosen), or null for none. */
  readonly sandboxAccounts: string | null;
}

/** What the build hands to the recording units: a checked file, or why it may not be released. */
export type BuiltFile =
  | {
    readonly ok: true;
    readonly batchId: string;
    readonly row: AchFileRow;
    /** The entries' facts and sandbox accounts, RECORD_ENTRIES_PER_UNIT_MAX entries a page. */
    readonly pages: readonly RecordPage[];
    /** When its entries' return window closes. */
    readonly settlesAt: number;
  }
  | { readonly ok: false; readonly batchId: string; readonly error: string };

/**
 * The sandbox test account given to a test payee who chose ACH without entering details, kept
 * on its payout as entered details are, so the sandbox bank's returns see it as any other.
 */
interface SandboxAccountChosen {
  readonly payoutId: string;
  readonly routingNumber: string;
  readonly accountSealed: string;
}

/** What a build reads with: committed data and the key of sealed account numbers. */
export interface FileBuildDeps {
  readonly reader: SqlReader;
  readonly secretBox: SecretBox;
  /** The sandbox bank's: a test payee who entered no details is paid to its test account. */
  readonly sandboxTestAccounts: boolean;
}

/** The sandbox bank's routing number, for test payees who entered no details. */
export const SANDBOX_ROUTING_NUMBER = "021000021";

/** The sandbox test account a test payee's scenario stands for, when the payee entered none. */
export function sandboxAccountOf(scenario: SandboxScenario | undefined): ReceivingAccount {
  const accountNumber = scenario === "returns_r03"
    ? sandboxTestDetails.achReturnsR03
    : scenario === "transient_once"
    ? sandboxTestDetails.achTransientOnce
    : sandboxTestDetails.achSettles;
  return { routingNumber: SANDBOX_ROUTING_NUMBER, accountNumber, accountType: "checking" };
}

/** The account an entry goes to: the payee's (unsealed; the sandbox's test account when none). */
async function payeeAccount(
  deps: FileBuildDeps,
  entry: EntryForFile,
): Promise<ReceivingAccount & { readonly sandboxTestAccount?: true }> {
  const details = JSON.parse(entry.methodDetails ?? "{}") as Record<string, unknown>;
  const routing = typeof details.routing_number === "string" ? details.routing_number : null;
  const sealed = typeof details.account_sealed === "string" ? details.account_sealed : null;
  if (routing !== null && sealed !== null) {
    return {
      routingNumber: routing,
      accountNumber: await deps.secretBox.openText(sealed),
      accountType: details.account_type === "savings" ? "savings" : "checking",
    };
  }
  if (deps.sandboxTestAccounts) {
    // A sandbox test payee (success+ach, fail+ach) chose without entering details.
    return {
      ...sandboxAccountOf(details.scenario as SandboxScenario | undefined),
      sandboxTestAccount: true,
    };
  }
  throw new Error(`payout ${entry.payoutId} chose ACH without bank details`);
}

/** Each entry with the account it goes to: payees' after notices of change, the funding account. */
async function fileLines(
  deps: FileBuildDeps,
  claim: FileClaim,
  entries: readonly EntryForFile[],
): Promise<FileLine[]> {
  const funding = claim.settings.fundingAccount;
  const corrections = await hasCorrections(deps.reader, claim.companyId);
  const lines: FileLine[] = [];
  for (const entry of entries) {
    if (entry.direction === "debit") {
      lines.push({
        entry,
        account: {
          routingNumber: funding.routingNumber,
          accountNumber: funding.accountNumber,
          accountType: funding.accountType,
        },
      });
      continue;
    }
    const account = await payeeAccount(deps, entry);
    lines.push({
      entry,
      // Rare: the company's bank sent notices of change; then each account is looked up.
      account: corrections
        ? await correctedAccount(deps.reader, deps.secretBox, claim.companyId, account)
        : account,
    });
  }
  return lines;
}

/** The entry hash of a file: the sum of its entries' 8-digit receiving DFIs, last 10 digits. */
function entryHashOf(routingNumbers: readonly string[]): string {
  const sum = routingNumbers.reduce((total, routing) => total + BigInt(routing.slice(0, 8)), 0n);
  return (sum % 10_000_000_000n).toString().padStart(10, "0");
}

const isCredit = (code: number) => code === 22 || code === 32;

/** The recording units' pages of a file's lines. */
async function recordPagesOf(
  deps: FileBuildDeps,
  lines: readonly FileLine[],
): Promise<RecordPage[]> {
  const sandboxAccounts = await sealSandboxAccounts(deps, lines);
  const pages: RecordPage[] = [];
  for (let at = 0; at < lines.length; at += RECORD_ENTRIES_PER_UNIT_MAX) {
    const page = lines.slice(at, at + RECORD_ENTRIES_PER_UNIT_MAX);
    const facts: EntryFacts[] = page.map((line) => ({
      id: line.entry.id,
      receivingDfi: line.account.routingNumber.slice(0, 8),
      accountLastFour: line.account.accountNumber.slice(-4),
      transactionCode: transactionCodeOf(line),
      entryClass: entryClassOf(line.entry),
    }));
    const chosen = page.flatMap((line) => {
      const account = sandboxAccounts.get(line.entry.id);
      return account ? [account] : [];
    });
    pages.push({
      facts: JSON.stringify(facts),
      sandboxAccounts: chosen.length > 0 ? JSON.stringify(chosen) : null,
    });
  }
  return pages;
}

/** Builds and checks the claimed batch's file (see the module's comment). */
export async function buildFile(deps: FileBuildDeps, claim: FileClaim): Promise<BuiltFile> {
  const refused = (error: string): BuiltFile => ({ ok: false, batchId: claim.batchId, error });
  const entries = await entriesForFile(deps.reader, claim.batchId);
  const lines = await fileLines(deps, claim, entries);
  const odfi = claim.settings.odfiRouting.slice(0, 8);
  const lastSequence = Math.max(0, ...entries.map((e) => Number(e.traceNumber.slice(8))));
  const created = bankLocal(claim.slot.at, claim.settings.timeZone);
  const { model, offsetTraces } = fileModelOf(claim.settings, {
    slot: claim.slot,
    created,
    fileIdModifier: claim.fileIdModifier,
    offsetTrace: (i) => `${odfi}${String(lastSequence + 1 + i).padStart(7, "0")}`,
  }, lines);
  let content: string;
  try {
    content = buildNachaFile(model);
  } catch (error) {
    return refused(
      `the file could not be built: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const checked = checkNachaFile(content, { odfi });
  if (!checked.ok) return refused(`the built file fails its check: ${checked.message}`);
  const summary = checked.value;
  const written = summary.batches.flatMap((batch) => batch.entries)
    .filter((entry) => !offsetTraces.has(entry.traceNumber));
  const expected = {
    count: entries.length,
    credits: entries.filter((e) => e.direction === "credit")
      .reduce((sum, e) => sum + e.expectedCents, 0),
    debits: entries.filter((e) => e.direction === "debit")
      .reduce((sum, e) => sum + e.expectedCents, 0),
    entryHash: entryHashOf(
      model.batches.flatMap((batch) => batch.entries.map((entry) => entry.routingNumber)),
    ),
  };
  const found = {
    count: written.length,
    credits: written.filter((e) => isCredit(e.transactionCode))
      .reduce((sum, e) => sum + e.amountCents, 0),
    debits: written.filter((e) => !isCredit(e.transactionCode))
      .reduce((sum, e) => sum + e.amountCents, 0),
    entryHash: summary.entryHash,
  };
  const differences = (Object.keys(expected) as (keyof typeof expected)[])
    .filter((key) => expected[key] !== found[key])
    .map((key) => `${key}: the database says ${expected[key]}, the file has ${found[key]}`);
  const traces = new Set(entries.map((e) => e.traceNumber));
  if (written.some((e) => !traces.has(e.traceNumber))) {
    differences.push("the file carries a trace no entry of the batch has");
  }
  if (differences.length > 0) {
    return refused(`the file does not match its entries: ${differences.join("; ")}`);
  }
  return {
    ok: true,
    batchId: claim.batchId,
    row: {
      batchId: claim.batchId,
      companyId: claim.companyId,
      immediateOrigin: claim.settings.immediateOrigin,
      immediateDestination: claim.settings.immediateDestination,
      bankDate: claim.slot.bankDate,
      fileIdModifier: claim.fileIdModifier,
      effectiveDate: claim.slot.effectiveDate,
      cutoffKind: claim.slot.kind,
      windowEndsAt: claim.slot.windowEndsAt,
      contentSealed: await sealFileContent(deps.secretBox, content),
      // Cut in pieces when it is kept (lib/ach/jobs.ts).
      contentPieces: null,
      sha256: await sha256Hex(content),
      byteSize: new TextEncoder().encode(content).length,
      entryHash: summary.entryHash,
      creditTotalCents: expected.credits,
      debitTotalCents: expected.debits,
      entryCount: entries.length,
      fileName: claim.fileName,
      approvalId: null,
      createdAt: claim.slot.at,
    },
    settlesAt: settlementAt(claim.slot.effectiveDate, claim.settings.timeZone),
    pages: await recordPagesOf(deps, lines),
  };
}

/**
 * The sandbox test accounts the file used, to keep on their payouts, by entry id. Each test
 * account number is sealed once for the whole file: they are the sandbox's published numbers,
 * and sealing a catastrophe day's 10,000 one by one took seconds.
 */
async function sealSandboxAccounts(
  deps: FileBuildDeps,
  lines: readonly FileLine[],
): Promise<Map<string, SandboxAccountChosen>> {
  const sealed = new Map<string, Promise<string>>();
  const sealOnce = (accountNumber: string) => {
    let found = sealed.get(accountNumber);
    if (!found) sealed.set(accountNumber, found = deps.secretBox.sealText(accountNumber));
    return found;
  };
  const chosen = await Promise.all(
    lines.filter((line) => "sandboxTestAccount" in line.account).map(async (line) =>
      [line.entry.id, {
        payoutId: line.entry.payoutId!,
        routingNumber: line.account.routingNumber,
        accountSealed: await sealOnce(line.account.accountNumber),
      }] as const
    ),
  );
  return new Map(chosen);
}

/**
 * A kept file opened for its transmission: its bytes, as the bank gets them, and the accounts its
 * entries pay. Bytes, not text: a file worker hands them over without a copy (as text, a catastrophe
 * day's 1 MB was copied into the service's heap in the transmission's short phase, and encoded
 * there again for the upload).
 */
export interface OpenedFile {
  readonly content: Uint8Array<ArrayBuffer>;
  readonly accountNumbers: string[];
}

/**
 * Opens a kept file's sealed content before it is handed to the bank, and refuses it unless it is
 * the very file its build checked: the SHA-256 the build took of the content that passed the strict
 * checker and matched the database. Content altered, sealed under another key, cut short or put
 * together from another file's pieces is refused here, and nothing is sent. The strict checker is
 * not run again over the same bytes: it could find nothing more, and on a catastrophe day's 10,000
 * entries its run (and V8's optimizing of it, on threads of normal priority) took the CPU from the
 * service's thread during the transmission.
 */
export async function openKeptContent(
  secretBox: SecretBox,
  file: Pick<AchFileRow, "batchId" | "sha256" | "contentSealed">,
): Promise<OpenedFile> {
  const text = await openKeptText(secretBox, file);
  return { content: new TextEncoder().encode(text), accountNumbers: entryAccountNumbers(text) };
}

/** A kept file's text, only when it is the file its build checked (lib/rails/kept_file.ts). */
export function openKeptText(
  secretBox: SecretBox,
  file: Pick<AchFileRow, "batchId" | "sha256" | "contentSealed">,
): Promise<string> {
  return openAsBuilt(
    `ACH file ${file.batchId}`,
    () => openFileContent(secretBox, file.contentSealed),
    file.sha256,
  );
}
