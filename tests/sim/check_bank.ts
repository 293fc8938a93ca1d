/**
 * The simulated check bank: the service's check transport in the simulation. It reads each
 * positive-pay file it is handed (issues and voids, in the company's template), keeps its own
 * register of what it may pay, and pays a check when its payee presents it (days later, drawn by
 * its own PRNG) only if the check was issued to it and not voided before. Now and then it errs as
 * banks do: it pays a check for another amount than written (a misread encoding), or honours the
 * same check a second time days later (deposited twice). Every banking morning
 * from its first file, the checks paid since the last morning come back as a paid-items CSV the
 * harness delivers (only its header when nothing was paid, as banks send every day).
 */
import type { CheckTransport } from "../../lib/checks/rail.ts";
import type { CheckSettings } from "../../lib/checks/settings_store.ts";
import type { CheckFileRow } from "../../lib/checks/files_store.ts";
import type { UploadAnswer } from "../../lib/ach/transport.ts";
import { bankLocal, bankTime, nextBankingDay } from "../../lib/ach/cutoffs.ts";
import { Prng } from "./prng.ts";
import type { UploadMode } from "./bank.ts";

export interface BankCheck {
  readonly number: number;
  readonly amountCents: number;
  voided: boolean;
  /** When the payee presents it; null: never (the check is lost). */
  presentAt: number | null;
  paid: boolean;
  /** Every payment of the check: once, or twice when the bank honoured it again. */
  readonly payments: Payment[];
  /** When the payee deposits it a second time and the bank pays it again; null: never. */
  presentAgainAt: number | null;
  /** Presented after a void reached the bank: refused. */
  refused: boolean;
}

/** One payment the bank made of a check, for what it paid. */
export interface Payment {
  readonly number: number;
  readonly at: number;
  readonly cents: number;
}

export interface PaidItemsDelivery {
  readonly at: number;
  readonly fileName: string;
  readonly content: string;
}

const DAY_MS = 86_400_000;
/** Chances of the bank's errors per check it pays: another amount, a second payment. */
const WRONG_AMOUNT_CHANCE = 0.04;
const PAID_TWICE_CHANCE = 0.03;

export class SimCheckBank implements CheckTransport {
  readonly takesFilesAnyTime = true;
  readonly #prng: Prng;
  readonly #timeZone = "America/New_York";
  readonly checks = new Map<number, BankCheck>();
  readonly filesTaken: string[] = [];
  /** Reports whose import failed (a crash), delivered again before the next morning's. */
  readonly pending: PaidItemsDelivery[] = [];
  /** Payments not reported yet, in the order they were made. */
  readonly #unreported: Payment[] = [];
  /** The morning of the last report (or of the first file's day); null before any file. */
  #lastMorning: number | null = null;
  readonly answers: UploadMode[] = [];
  #sequence = 0;

  constructor(seed: number) {
    this.#prng = new Prng(seed ^ 0xc4ec_5eed);
  }

  uploads(): boolean {
    return true;
  }

  upload(settings: CheckSettings, file: CheckFileRow, content: Uint8Array): Promise<UploadAnswer> {
    const mode = this.answers.shift() ?? "take";
    if (mode === "refuse") {
      return Promise.resolve({ kind: "not_uploaded", reason: "the simulated check bank refused" });
    }
    if (mode === "doubt_lost") {
      return Promise.reject(new Error("the simulated check bank hung up (file lost)"));
    }
    this.filesTaken.push(file.fileName);
    if (file.kind === "positive_pay") {
      this.#readPositivePay(settings, new TextDecoder().decode(content), file.createdAt);
      this.#lastMorning ??= bankTime(
        bankLocal(file.createdAt, this.#timeZone).date,
        "07:00",
        this.#timeZone,
      );
    }
    if (mode === "doubt_taken") {
      return Promise.reject(new Error("the simulated check bank hung up (file taken)"));
    }
    return Promise.resolve({ kind: "uploaded", remotePath: `sim://${file.fileName}` });
  }

  has(fileName: string): boolean {
    return this.filesTaken.includes(fileName);
  }

  #readPositivePay(settings: CheckSettings, text: string, at: number): void {
    const template = settings.account.positivePay;
    const lines = text.split(/\r?\n/).filter((line) => line.length > 0);
    if (template.header) lines.shift();
    for (const line of lines) {
      const cells = splitCsv(line);
      const value = (column: string) => cells[template.columns.indexOf(column as never)];
      const number = Number(value("check_number"));
      const amountText = value("amount");
      const amountCents = template.amountFormat === "cents"
        ? Number(amountText)
        : Math.round(Number(amountText.replace(".", "")));
      if (value("issue_void") === template.voidLetter) {
        const check = this.checks.get(number);
        if (check && !check.paid) check.voided = true;
        continue;
      }
      if (this.checks.has(number)) continue;
      // Most payees deposit within days; some never do.
      const presentAt = this.#prng.chance(0.9) ? at + this.#prng.int(1, 9) * DAY_MS : null;
      this.checks.set(number, {
        number,
        amountCents,
        voided: false,
        presentAt,
        paid: false,
        payments: [],
        presentAgainAt: null,
        refused: false,
      });
    }
  }

  /** Presents the checks due by `now`; the ones paid go in the next morning's report. */
  present(now: number): void {
    for (const check of this.checks.values()) {
      if (check.presentAgainAt !== null && check.presentAgainAt <= now) {
        this.#pay(check, check.presentAgainAt, check.amountCents);
        check.presentAgainAt = null;
      }
      if (check.presentAt === null || check.presentAt > now || check.paid || check.refused) {
        continue;
      }
      if (check.voided) check.refused = true;
      else {
        check.paid = true;
        const wrong = this.#prng.chance(WRONG_AMOUNT_CHANCE);
        const cents = wrong
          ? Math.max(1, check.amountCents + this.#prng.pick([-1_000, -100, 100, 1_000]))
          : check.amountCents;
        this.#pay(check, check.presentAt, cents);
        if (this.#prng.chance(PAID_TWICE_CHANCE)) {
          check.presentAgainAt = check.presentAt + this.#prng.int(1, 5) * DAY_MS;
        }
      }
    }
  }

  #pay(check: BankCheck, at: number, cents: number): void {
    const payment = { number: check.number, at, cents };
    check.payments.push(payment);
    this.#unreported.push(payment);
    this.#unreported.sort((a, b) => a.at - b.at);
  }

  /** The next moment a check is presented after `now`, or Infinity. */
  nextPresentment(now: number): number {
    let next = Infinity;
    for (const check of this.checks.values()) {
      if (check.presentAt !== null && check.presentAt > now && !check.paid && !check.refused) {
        next = Math.min(next, check.presentAt);
      }
      if (check.presentAgainAt !== null && check.presentAgainAt > now) {
        next = Math.min(next, check.presentAgainAt);
      }
    }
    return next;
  }

  /** The next banking morning's report after the last one, or null before the first file. */
  #nextMorning(): number | null {
    if (this.#lastMorning === null) return null;
    const day = nextBankingDay(bankLocal(this.#lastMorning, this.#timeZone).date);
    return bankTime(day, "07:00", this.#timeZone);
  }

  /** When the next report with paid items is due (empty ones go with whatever comes next). */
  nextReportAt(): number {
    if (this.pending.length > 0) return this.pending[0].at;
    return this.#unreported.length > 0 ? this.#nextMorning() ?? Infinity : Infinity;
  }

  /** Whether the bank still owes a report of a payment. */
  owesReports(): boolean {
    return this.pending.length > 0 || this.#unreported.length > 0;
  }

  /** The next report due by `until`: one failed before, else the next morning's. */
  nextDue(until: number): PaidItemsDelivery | null {
    if (this.pending.length > 0 && this.pending[0].at <= until) return this.pending.shift()!;
    const morning = this.#nextMorning();
    if (morning === null || morning > until) return null;
    this.#lastMorning = morning;
    const paid: Payment[] = [];
    while (this.#unreported.length > 0 && this.#unreported[0].at < morning) {
      paid.push(this.#unreported.shift()!);
    }
    const rows = paid.map((payment) =>
      `${payment.number},${Math.floor(payment.cents / 100)}.${
        String(payment.cents % 100).padStart(2, "0")
      },${bankLocal(payment.at, this.#timeZone).date}`
    );
    return {
      at: morning,
      fileName: `SIM_PAID_${this.#sequence++}.csv`,
      content: ["check_number,amount,paid_date", ...rows].join("\n") + "\n",
    };
  }

  postpone(delivery: PaidItemsDelivery, at: number): void {
    this.pending.push({ ...delivery, at });
    this.pending.sort((a, b) => a.at - b.at);
  }
}

/** The cells of one CSV line (RFC 4180 quotes). */
function splitCsv(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") {
      cells.push(cell);
      cell = "";
    } else cell += char;
  }
  cells.push(cell);
  return cells;
}
