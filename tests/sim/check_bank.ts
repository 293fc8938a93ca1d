/**
 * The simulated check bank: the service's check transport in the simulation. It reads each
 * positive-pay file it is handed (issues and voids, in the company's template), keeps its own
 * register of what it may pay, and pays a check when its payee presents it (days later, drawn by
 * its own PRNG) only if the check was issued to it and not voided before. Each banking morning's
 * paid checks come back as a paid-items CSV the harness delivers.
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
  /** Presented after a void reached the bank: refused. */
  refused: boolean;
}

export interface PaidItemsDelivery {
  readonly at: number;
  readonly fileName: string;
  readonly content: string;
}

const DAY_MS = 86_400_000;

export class SimCheckBank implements CheckTransport {
  readonly takesFilesAnyTime = true;
  readonly #prng: Prng;
  readonly #timeZone = "America/New_York";
  readonly checks = new Map<number, BankCheck>();
  readonly filesTaken: string[] = [];
  readonly pending: PaidItemsDelivery[] = [];
  readonly answers: UploadMode[] = [];
  /** Payees present a check at most this long after its issue (null: whenever they draw). */
  presentWithinMs: number | null = null;
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
      const drawn = this.#prng.chance(0.9) ? at + this.#prng.int(1, 9) * DAY_MS : null;
      const presentAt = drawn !== null && this.presentWithinMs !== null
        ? Math.min(drawn, at + this.presentWithinMs)
        : drawn;
      this.checks.set(number, {
        number,
        amountCents,
        voided: false,
        presentAt,
        paid: false,
        refused: false,
      });
    }
  }

  /** Presents the checks due by `now`; the ones paid go in that banking day's paid-items file. */
  present(now: number): void {
    const paid: BankCheck[] = [];
    for (const check of this.checks.values()) {
      if (check.presentAt === null || check.presentAt > now || check.paid || check.refused) {
        continue;
      }
      if (check.voided) check.refused = true;
      else {
        check.paid = true;
        paid.push(check);
      }
    }
    if (paid.length === 0) return;
    const day = bankLocal(now, this.#timeZone).date;
    const rows = paid.map((check) =>
      `${check.number},${Math.floor(check.amountCents / 100)}.${
        String(check.amountCents % 100).padStart(2, "0")
      },${day}`
    );
    this.pending.push({
      at: bankTime(nextBankingDay(day), "07:00", this.#timeZone),
      fileName: `SIM_PAID_${this.#sequence++}.csv`,
      content: ["check_number,amount,paid_date", ...rows].join("\n") + "\n",
    });
    this.pending.sort((a, b) => a.at - b.at);
  }

  /** The next moment a check is presented after `now`, or Infinity. */
  nextPresentment(now: number): number {
    let next = Infinity;
    for (const check of this.checks.values()) {
      if (check.presentAt !== null && check.presentAt > now && !check.paid && !check.refused) {
        next = Math.min(next, check.presentAt);
      }
    }
    return next;
  }

  nextDue(until: number): PaidItemsDelivery | null {
    if (this.pending.length === 0 || this.pending[0].at > until) return null;
    return this.pending.shift()!;
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
