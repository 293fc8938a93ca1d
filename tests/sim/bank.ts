/**
 * The simulated ACH bank: the service's ACH transport in the simulation. It keeps its own books
 * (what it received, what it paid out and collected, what it sent back) independent of the
 * service's database, decides each entry's fate with its own seeded PRNG, and answers uploads as
 * the run asks (taken, refused, or unknown after taking or losing the file). Return and
 * notice-of-change files it writes are delivered by the harness when the clock reaches them.
 */
import type { AchTransport } from "../../lib/ach/rail.ts";
import type { BankSettings } from "../../lib/ach/bank_settings.ts";
import type { UploadAnswer } from "../../lib/ach/transport.ts";
import { bankLocal, bankTime, nextBankingDay } from "../../lib/ach/cutoffs.ts";
import { buildReturnFile, type ReturnToWrite } from "../../lib/ach/nacha.ts";
import { field, isoDateOf, readNachaRecords } from "../../lib/ach/nacha_records.ts";
import { Prng } from "./prng.ts";

/** How the bank answers the next upload. */
export type UploadMode = "take" | "refuse" | "doubt_taken" | "doubt_lost";

/** One entry the bank took, and what became of it. */
export interface BankEntry {
  readonly fileName: string;
  readonly trace: string;
  readonly transactionCode: number;
  readonly routing: string;
  readonly account: string;
  readonly amountCents: number;
  readonly individualId: string;
  readonly name: string;
  readonly entryClass: "PPD" | "CCD";
  readonly effectiveDate: string;
  /** Credit: paid to a payee; debit: collected from the company's funding account. */
  readonly credit: boolean;
  returned: boolean;
  /** When the bank's return is sent: before the settlement time, or after it (a late return). */
  returnTiming: "early" | "late" | null;
  /** Notices of change the bank sent for it (the same one may come twice). */
  notices: number;
}

/** A file the bank sends back (returns, notices of change), due at a domain time. */
export interface BankDelivery {
  readonly at: number;
  readonly fileName: string;
  readonly content: string;
  readonly traces: readonly string[];
  readonly kind: "return" | "correction";
}

/** Entry fates the run may draw (weights); a fate needing a later file is delivered then. */
export interface BankFates {
  settle: number;
  /** Returned before the settlement time (R03 on the second banking day, 09:00). */
  returnEarly: number;
  /** Returned after settlement: a late return. */
  returnLate: number;
  /** A notice of change a banking day later (sometimes sent twice). */
  notice: number;
  /** A funding debit returned before it clears. */
  debitReturnEarly: number;
  /** A funding debit returned after it cleared. */
  debitReturnLate: number;
}

export class SimAchBank implements AchTransport {
  readonly #prng: Prng;
  readonly #fates: BankFates;
  readonly #timeZone = "America/New_York";
  /** Every entry taken, by trace and file (a trace may come again in another file). */
  readonly entries: BankEntry[] = [];
  readonly filesTaken: string[] = [];
  readonly pending: BankDelivery[] = [];
  readonly delivered: BankDelivery[] = [];
  /** Files the bank never got (refused, or lost in an unknown upload), by name. */
  readonly filesLost = new Set<string>();
  /** Told of each file the bank refuses, before the refusal is answered. */
  onRefused: ((fileName: string) => Promise<void>) | null = null;
  /** Answers for the next uploads; "take" once they run out. */
  readonly answers: UploadMode[] = [];
  /** When true, files wait for an operator's download (no upload target). */
  handMode = false;
  /** The domain time the service is at, for scheduling the bank's answers. */
  now: () => number = () => 0;
  settings: BankSettings | null = null;
  #sequence = 0;

  constructor(seed: number, fates: BankFates) {
    this.#prng = new Prng(seed ^ 0x5eed_ba4c);
    this.#fates = fates;
  }

  uploads(): boolean {
    return !this.handMode;
  }

  async upload(
    settings: BankSettings,
    file: { readonly fileName: string; readonly content: Uint8Array },
    _attempt: number,
  ): Promise<UploadAnswer> {
    this.settings = settings;
    const mode = this.answers.shift() ?? "take";
    if (mode === "refuse") {
      await this.onRefused?.(file.fileName);
      return { kind: "not_uploaded", reason: "the simulated bank refused" };
    }
    if (mode === "doubt_lost") {
      this.filesLost.add(file.fileName);
      throw new Error("the simulated bank hung up mid-upload (file lost)");
    }
    this.take(file.fileName, new TextDecoder().decode(file.content));
    if (mode === "doubt_taken") {
      throw new Error("the simulated bank hung up mid-upload (file taken)");
    }
    return { kind: "uploaded", remotePath: `sim://${file.fileName}` };
  }

  /** Whether the bank has a file of this name (what an operator asks before resolving). */
  has(fileName: string): boolean {
    return this.filesTaken.includes(fileName);
  }

  /** Takes a file: an upload, or an operator's upload by hand. A file name taken twice pays twice. */
  take(fileName: string, content: string): void {
    const read = readNachaRecords(content);
    if (!read.ok) throw new Error(`the simulated bank got a malformed file: ${read.message}`);
    this.filesTaken.push(fileName);
    for (const batch of read.value.batches) {
      const header = batch.header.text;
      const entryClass = field(header, 51, 53) === "CCD" ? "CCD" : "PPD";
      const effectiveDate = isoDateOf(field(header, 70, 75))!;
      for (const { record } of batch.entries) {
        const text = record.text;
        const transactionCode = Number(field(text, 2, 3));
        // Only payments and collections (prenotes and the like carry other codes).
        if (
          transactionCode !== 22 && transactionCode !== 32 && transactionCode !== 27 &&
          transactionCode !== 37
        ) continue;
        const entry: BankEntry = {
          fileName,
          trace: field(text, 80, 94),
          transactionCode,
          routing: field(text, 4, 12),
          account: field(text, 13, 29).trim(),
          amountCents: Number(field(text, 30, 39)),
          individualId: field(text, 40, 54).trim(),
          name: field(text, 55, 76).trim(),
          entryClass,
          effectiveDate,
          credit: transactionCode === 22 || transactionCode === 32,
          returned: false,
          returnTiming: null,
          notices: 0,
        };
        // A balanced batch's offset moves the company's own settlement account: no payment.
        if (entry.individualId === "OFFSET") continue;
        this.entries.push(entry);
        this.#decideFate(entry);
      }
    }
  }

  #decideFate(entry: BankEntry): void {
    const f = this.#fates;
    const fate = entry.credit
      ? this.#prng.weighted({
        settle: f.settle,
        returnEarly: f.returnEarly,
        returnLate: f.returnLate,
        notice: f.notice,
      })
      : this.#prng.weighted({
        settle: f.settle,
        debitReturnEarly: f.debitReturnEarly,
        debitReturnLate: f.debitReturnLate,
      });
    const day1 = nextBankingDay(entry.effectiveDate);
    const day2 = nextBankingDay(day1);
    const day3 = nextBankingDay(day2);
    switch (fate) {
      case "returnEarly":
        entry.returnTiming = "early";
        this.#schedule("return", bankTime(this.#prng.pick([day1, day2]), "09:00", this.#timeZone), [
          entry,
        ], this.#prng.pick(["R03", "R02", "R04", "R16", "R09"]));
        break;
      case "returnLate":
        entry.returnTiming = "late";
        this.#schedule("return", bankTime(day3, "10:00", this.#timeZone), [entry], "R06");
        break;
      case "notice": {
        const at = bankTime(day1, "11:00", this.#timeZone);
        this.#schedule("correction", at, [entry], "C01");
        // The same notice again in a later file: it must change nothing.
        if (this.#prng.chance(0.3)) this.#schedule("correction", at + 3_600_000, [entry], "C01");
        break;
      }
      case "debitReturnEarly":
        this.#schedule("return", bankTime(day1, "09:00", this.#timeZone), [entry], "R01");
        break;
      case "debitReturnLate":
        this.#schedule("return", bankTime(day3, "09:00", this.#timeZone), [entry], "R01");
        break;
    }
  }

  #schedule(
    kind: "return" | "correction",
    at: number,
    entries: BankEntry[],
    code: string,
  ): void {
    const settings = this.settings;
    if (settings === null) throw new Error("the simulated bank has no settings to answer with");
    const written: ReturnToWrite[] = entries.map((entry) => ({
      kind,
      code,
      original: {
        traceNumber: entry.trace,
        transactionCode: entry.transactionCode,
        routingNumber: entry.routing,
        accountNumber: entry.account,
        amountCents: entry.amountCents,
        individualId: entry.individualId,
        name: entry.name || "PAYEE",
        entryClass: entry.entryClass,
      },
      ...(kind === "correction"
        ? { correction: { accountNumber: `9${entry.account.slice(1)}` } }
        : {}),
    }));
    const created = bankLocal(at, this.#timeZone);
    const sequence = this.#sequence++;
    const content = buildReturnFile({
      immediateDestination: settings.immediateDestination,
      immediateOrigin: settings.immediateOrigin,
      companyName: settings.companyName,
      companyIdentification: settings.companyIdentification,
      rdfi: settings.odfiRouting.slice(0, 8),
      createdDate: created.date,
      createdTime: created.time,
      fileIdModifier: String.fromCharCode(65 + (sequence % 26)),
      entries: written,
    });
    this.pending.push({
      at,
      fileName: `SIM_${kind.toUpperCase()}_${sequence}.ach`,
      content,
      traces: entries.map((entry) => entry.trace),
      kind,
    });
    this.pending.sort((a, b) => a.at - b.at);
  }

  /** The next delivery due at or before `until`, taken off the queue; its returns are booked. */
  nextDue(until: number): BankDelivery | null {
    if (this.pending.length === 0 || this.pending[0].at > until) return null;
    const delivery = this.pending.shift()!;
    if (delivery.kind === "correction") {
      for (const trace of delivery.traces) {
        const entry = this.entries.findLast((e) => e.trace === trace);
        if (entry) entry.notices++;
      }
    }
    if (delivery.kind === "return") {
      for (const trace of delivery.traces) {
        const entry = this.entries.findLast((e) => e.trace === trace && !e.returned);
        if (entry) entry.returned = true;
      }
    }
    this.delivered.push(delivery);
    return delivery;
  }

  /** Sends a taken-off delivery again at `at` (its returns stay booked). */
  postpone(delivery: BankDelivery, at: number): void {
    this.delivered.pop();
    this.pending.push({ ...delivery, at });
    this.pending.sort((a, b) => a.at - b.at);
  }

  /** The bank's net movement by owner tail (a payout's or funding's id, last 15 characters). */
  netPaidByOwner(): Map<string, number> {
    const paid = new Map<string, number>();
    for (const entry of this.entries) {
      const sign = entry.returned ? 0 : 1;
      paid.set(entry.individualId, (paid.get(entry.individualId) ?? 0) + sign);
    }
    return paid;
  }
}
