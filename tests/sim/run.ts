/**
 * One seed of the money simulation: a random interleaving of what companies, payees, operators,
 * the bank and time do to payouts, run against the real service (its service functions, the
 * scheduler of its worker loop, its sandbox clock and its ACH rail) on real database files, with
 * the invariants checked after every step and after a final drain. A seed decides every step
 * through one PRNG, so `runSeed(seed)` replays exactly; ids may differ from run to run, decisions
 * do not.
 */
import { advanceSandboxClock, runDueJobs } from "../../db/scheduler.ts";
import { cancelApiPayee, createApiDisbursement } from "../../lib/disbursements/service.ts";
import {
  cancelV1Disbursement,
  createV1Disbursement,
  upsertV1Payee,
} from "../../lib/disbursements/service.ts";
import { fundLine } from "../../lib/funding/service.ts";
import { cancelPayoutAsOperator, reofferAsOperator } from "../../lib/console/payout_actions.ts";
import { importAchFile } from "../../lib/ach/imports.ts";
import { importPaidItems } from "../../lib/checks/paid_import.ts";
import { chooseMethod, findLink, offeredMethod, portalPayout } from "../../lib/portal/service.ts";
import { portalText } from "../../lib/portal/portal_text.ts";
import { domainNow } from "../../lib/sandbox/clock_store.ts";
import { testSecretBox } from "../helpers.ts";
import { keepSealedInstead } from "../ach_file_rows.ts";
import { type BankFates, SimAchBank, type UploadMode } from "./bank.ts";
import { SimCheckBank } from "./check_bank.ts";
import { SimPaypal } from "./paypal_provider.ts";
import { validSettingsJson } from "../bank_helpers.ts";
import { liveCheckAccountJson } from "../checks_helpers.ts";
import type { ContractItem } from "../paypal_contract_server.ts";
import { receiveWebhook } from "../../lib/paypal/service.ts";
import { providerReachesOf } from "../../lib/payouts/provider_reaches.ts";
import { tokenizeSandboxCard } from "../../lib/instant/simulator.ts";
import { sandboxTestDetails } from "../../lib/rails/sandbox.ts";
import { checkFinal, checkStep, type Ledgerless } from "./invariants.ts";
import { Prng } from "./prng.ts";
import { SIM_START_FUNDS_CENTS, SIM_TIN, SimulatedCrash, type Template, World } from "./world.ts";

/** What the harness remembers of a payout it created (the service's ids, its own order). */
export interface SimPayout {
  readonly id: string;
  readonly via: "api" | "v1";
  /** Surface A: the disbursement and payee uuids; /v1: the disbursement id. */
  readonly disbursementUuid: string;
  readonly payeeUuid: string;
}

export interface SimOptions {
  /** Steps before the drain (default 40). */
  readonly steps?: number;
  /**
   * Also generate the interleavings of bugs still open (named in `OPEN_BUGS`), to see them
   * fail; off by default so the suite stays green until their fixes land.
   */
  readonly openBugs?: readonly OpenBug[];
  /** Leave the seed's database files in place (their directory is printed). */
  readonly keep?: boolean;
}

/**
 * Interleavings the harness holds back until their fixes land (issue "Money in flight", Why):
 * each names the bug it would hit. `--open-bugs` generates them.
 */
export const OPEN_BUGS: Readonly<Record<string, string>> = {};

/** The name of an open bug whose interleavings may be generated. */
export type OpenBug = string;

export interface StepRecord {
  readonly index: number;
  readonly step: string;
  readonly outcome: string;
}

export interface SeedResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly steps: readonly StepRecord[];
  readonly failure: string | null;
  /** Fingerprint of every decision and outcome: equal for two runs of one seed. */
  readonly trace: string;
  readonly restarts: number;
}

/** A violated invariant: the run stops and reports it with its steps. */
export class InvariantViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvariantViolation";
  }
}

const FATES: BankFates = {
  settle: 70,
  returnEarly: 10,
  returnLate: 6,
  notice: 8,
  debitReturnEarly: 10,
  debitReturnLate: 5,
};

/** PayPal's item webhook event names by the item state they tell of. */
const PAYPAL_EVENTS: Readonly<Record<string, string>> = {
  SUCCESS: "SUCCEEDED",
  UNCLAIMED: "UNCLAIMED",
  FAILED: "FAILED",
  REFUNDED: "REFUNDED",
};

const ACCOUNTS = ["000123456789", "000987654321", "004455667788", "12345678901"];
const ROUTING = "021000021";
/** Debit cards a payee types for an instant deposit: paid, declined, no push route. */
const INSTANT_CARDS = [
  sandboxTestDetails.cardSucceeds,
  sandboxTestDetails.cardSucceeds,
  sandboxTestDetails.cardDeclined,
  sandboxTestDetails.cardNotPushable,
];
const MINUTE = 60;
const HOUR = 3_600;
const DAY = 86_400;
/** Days after which a check of the company's own check account goes stale. */
const STALE_DAYS = 8;
const CLOCK_JUMPS = [10, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 7 * HOUR, DAY, 2 * DAY, 4 * DAY];

/** Runs one seed from the template; never throws for a finding (it is in the result). */
export async function runSeed(
  template: Template,
  seed: number,
  options: SimOptions = {},
): Promise<SeedResult> {
  const prng = new Prng(seed);
  const fates = FATES;
  const bank = new SimAchBank(seed, fates);
  const world = await World.open(template, bank, new SimCheckBank(seed));
  const paypal = new SimPaypal(seed, template.paypal);
  // A chance of its own, so that the seeds' other decisions stay what they were.
  const differences = new Prng(seed ^ 0x5eed_f00d);
  if (differences.chance(0.2)) {
    world.injectedFee = { amountCents: differences.int(1, 5_000), date: null };
  }
  // Drawn after the fee, so a seed's fee stays what it was.
  for (const kind of ["provider_settlement", "late_return"] as const) {
    if (differences.chance(0.2)) world.missingLines.push({ kind, move: null, date: null });
  }
  // Drawn after the left-out lines, so those stay what they were.
  const altersRefusedFile = differences.chance(0.2);
  const sim = new Sim(world, prng, paypal, options);
  if (altersRefusedFile) {
    bank.onRefused = (name) => sim.alterRefusedFile(name);
    sim.records.push({
      index: -1,
      step: "the kept content of the first ACH file the bank refuses is altered as it refuses it",
      outcome: "injected",
    });
  }
  for (const missing of world.missingLines) {
    sim.records.push({
      index: -1,
      step: `the sandbox bank leaves out the line of the first ${
        missing.kind === "late_return" ? "late ACH return" : "provider settlement"
      } it states`,
      outcome: "injected",
    });
  }
  if (world.injectedFee !== null) {
    sim.records.push({
      index: -1,
      step:
        `the sandbox bank adds a fee of ${world.injectedFee.amountCents} cents to its first day`,
      outcome: "injected",
    });
  }
  bank.now = () => sim.domainNowCached;
  paypal.now = () => sim.domainNowCached;
  try {
    if (prng.chance(0.3)) await sim.storeBankSettings();
    if (prng.chance(0.25)) {
      // An ODFI whose traces are about to wrap past 9,999,999 (a bank used for years).
      await world.test.writer.write((tx) =>
        tx.execute({
          sql: `INSERT INTO ach_trace_sequences (odfi, next_sequence) VALUES (?, ?)
                ON CONFLICT (odfi) DO UPDATE SET next_sequence = excluded.next_sequence`,
          args: [world.bank.settings!.odfiRouting.slice(0, 8), 9_999_990],
        })
      );
      sim.records.push({ index: -1, step: "traces start at 9999990", outcome: "set" });
    }
    await sim.refreshNow();
    const steps = options.steps ?? 40;
    for (let i = 0; i < steps; i++) await sim.step(i);
    await sim.drain();
    await checkFinal(sim.view());
    return sim.result(seed, null);
  } catch (error) {
    if (error instanceof InvariantViolation) return sim.result(seed, error.message);
    return sim.result(
      seed,
      `unexpected error: ${error instanceof Error ? error.stack ?? error.message : error}`,
    );
  } finally {
    paypal.detach();
    await world.close(options.keep);
  }
}

/** The harness's state beside the world: what it created and what it did. */
export class Sim {
  readonly payouts: SimPayout[] = [];
  readonly achFundings: { id: string; cents: number }[] = [];
  /** Money the harness wired in (the bank's other movement besides ACH entries). */
  wiredCents = SIM_START_FUNDS_CENTS;
  readonly records: StepRecord[] = [];
  domainNowCached = 0;
  #sequence = 0;

  constructor(
    readonly world: World,
    readonly prng: Prng,
    readonly paypal: SimPaypal,
    readonly options: SimOptions,
  ) {}

  view(): Ledgerless {
    return {
      world: this.world,
      paypal: this.paypal,
      payouts: this.payouts,
      wiredCents: this.wiredCents,
      openBugs: this.options.openBugs ?? [],
    };
  }

  result(seed: number, failure: string | null): SeedResult {
    return {
      seed,
      ok: failure === null,
      steps: this.records,
      failure,
      trace: this.records.map((r) => `${r.step}=${r.outcome}`).join("\n"),
      restarts: this.world.restarts,
    };
  }

  async refreshNow(): Promise<number> {
    this.domainNowCached = await domainNow(
      this.world.test,
      this.world.ids.companyId,
      this.world.clock.now(),
    );
    return this.domainNowCached;
  }

  async step(index: number): Promise<void> {
    const kind = this.prng.weighted({
      create_api: 6,
      create_v1: 4,
      choose: 10,
      cancel: 5,
      reoffer: 2,
      advance: 12,
      sweep: 4,
      fund_ach: 2,
      fund_wire: 1,
      funding_return: 1,
      bank_answer: 3,
      hand_mode: 1,
      operator_files: 4,
      crash: 3,
      check_void: 2,
      race: 2,
    });
    let outcome: string;
    const description: string[] = [kind];
    try {
      outcome = await this.#run(kind, description);
    } catch (error) {
      if (!(error instanceof SimulatedCrash) && !this.world.crash.crashed) throw error;
      outcome = "crashed";
    }
    if (this.world.crash.crashed) {
      // The process died at a unit boundary: start again from the files, leases run out.
      outcome += "; restarted";
      await this.world.restart(10 * MINUTE * 1000);
    }
    await this.refreshNow();
    this.records.push({ index, step: description.join(" "), outcome });
    await checkStep(this.view(), this.records);
  }

  /**
   * In a seed that injects it, alters the kept content of the first ACH file the bank refuses, as
   * it refuses it (another sealed text: its SHA-256 is not the build's), unless a crash is armed
   * (the alteration would count among the process's units): its retries must find it.
   */
  async alterRefusedFile(fileName: string): Promise<void> {
    const w = this.world;
    if (w.crash.unitsLeft !== null || w.crash.crashed) return;
    const { rows } = await w.test.readClient.execute({
      sql: "SELECT batch_id FROM ach_files WHERE file_name = ?",
      args: [fileName],
    });
    const batchId = String(rows[0].batch_id);
    await keepSealedInstead(
      w.test,
      batchId,
      await testSecretBox.sealText("altered by the simulation"),
    );
    w.alteredFile = fileName;
    w.bank.onRefused = null;
    this.records.push({
      index: -1,
      step: `the kept content of ${fileName.slice(-14)} is altered as the bank refuses it`,
      outcome: "altered",
    });
  }

  async #run(kind: string, d: string[]): Promise<string> {
    const w = this.world;
    const { companyId, lineId, userId } = w.ids;
    const realNow = w.clock.now();
    switch (kind) {
      case "create_api": {
        const count = this.prng.int(1, 3);
        const uuid = `D${this.#sequence++}`;
        const payouts = Array.from({ length: count }, (_, i) => {
          const email = this.prng.pick([
            "noaction",
            "noaction",
            "noaction",
            "success+ach",
            "success+vcc",
            "fail+vcc",
            "success+instant",
            "fail+instant",
          ]);
          return {
            payeeUuid: `P${i}`,
            amountCents: this.#amount(),
            allowedPaymentMethodIds: [1, 2, 3, 4, 6, 7],
            permissionRequiredFrom: [],
            payee: { email: `${email}@sim.test`, first_name: `Payee ${i}` },
          };
        });
        d.push(uuid, JSON.stringify(payouts.map((p) => [p.amountCents, p.payee.email])));
        const created = await w.test.writer.write((tx) =>
          createApiDisbursement(
            tx,
            w.test,
            {
              companyId,
              lineId,
              payorUserId: userId,
              fingerprint: uuid,
              disbursementUuid: uuid,
              largeDisbursement: false,
              payouts,
              parties: [],
            },
            realNow,
            null,
          )
        );
        if (!created.ok) return `refused ${created.code}`;
        for (const [i, payout] of created.value.disbursement.payouts.entries()) {
          this.payouts.push({
            id: payout.id,
            via: "api",
            disbursementUuid: uuid,
            payeeUuid: String(payout.fields.payee_uuid ?? `P${i}`),
          });
        }
        return "created";
      }
      case "create_v1": {
        const payeeId = `V${this.#sequence++}`;
        const amountCents = this.#amount();
        d.push(payeeId, String(amountCents));
        const scope = { companyId, lineId };
        const payee = await w.test.writer.write((tx) =>
          upsertV1Payee(tx, w.test, { ...scope, externalId: payeeId }, {
            name: "V Payee",
            email: `${payeeId.toLowerCase()}@sim.test`,
            contactChannel: "email",
          }, realNow)
        );
        if (!payee.ok) return `payee refused ${payee.code}`;
        const created = await w.test.writer.write((tx) =>
          createV1Disbursement(
            tx,
            w.test,
            scope,
            {
              payeeExternalId: payeeId,
              amountCents,
              modalities: ["ach", "check", "vcc", "instant_deposit", "venmo", "paypal"],
              claimId: `CLM-${payeeId}`,
              metadata: {},
            },
            realNow,
            null,
          )
        );
        if (!created.ok) return `refused ${created.code}`;
        this.payouts.push({
          id: created.value.payoutId,
          via: "v1",
          disbursementUuid: created.value.id,
          payeeUuid: payeeId,
        });
        return "created";
      }
      case "choose": {
        const payout = this.#pickPayout();
        if (!payout) return "no payout";
        if (this.prng.chance(0.25)) {
          if (this.prng.chance(0.4)) {
            d.push(this.#name(payout), "venmo");
            return await this.#choose(payout, "venmo", { phone: "(555) 555-0123" });
          }
          d.push(this.#name(payout), "paypal");
          return await this.#choose(payout, "paypal", { email: "payee@sim.test" });
        }
        if (this.prng.chance(0.15)) {
          d.push(this.#name(payout), "vcc");
          return await this.#choose(payout, "vcc", { email: "payee@sim.test" });
        }
        if (this.prng.chance(0.15)) {
          // Typed at the Increase simulator's hosted card field: the portal gets its token.
          const card = this.prng.pick(INSTANT_CARDS);
          d.push(this.#name(payout), "instant", card);
          const typed = await tokenizeSandboxCard(
            w.test,
            { pan: card, expiry: "12/30", cvv: "123" },
            realNow,
          );
          if (!typed.ok) return `card refused ${typed.code}`;
          return await this.#choose(payout, "instant_deposit", {
            card_token_id: typed.tokenId,
            card_last_four: typed.lastFour,
            cardholder_name: "Sim Payee",
            zip_code: "62701",
          });
        }
        if (this.prng.chance(0.3)) {
          d.push(this.#name(payout), "check");
          return await this.#choose(payout, "check", {
            address_one: "1 Main St",
            city: "Springfield",
            state: "IL",
            zip_code: "62701",
            postage: "FC",
          });
        }
        const account = this.prng.pick(ACCOUNTS);
        d.push(this.#name(payout), account);
        return await this.#choose(payout, "ach", {
          routing_number: ROUTING,
          account_number: account,
          account_number_confirm: account,
          account_type: "checking",
          typed_name: "Sim Payee",
          consent: "yes",
        });
      }
      case "cancel": {
        const payout = this.#pickPayout();
        if (!payout) return "no payout";
        const via = this.prng.pick(["api", "v1", "console"] as const);
        d.push(this.#name(payout), via);
        return await this.#cancel(payout, via, realNow);
      }
      case "reoffer": {
        const payout = this.#pickPayout();
        if (!payout) return "no payout";
        d.push(this.#name(payout));
        const answer = await reofferAsOperator(
          w.test,
          { operator: null, origin: "console" },
          payout.id,
          realNow,
        );
        return answer.ok ? "reoffered" : `refused ${answer.code}`;
      }
      case "advance": {
        const seconds = this.prng.pick(CLOCK_JUMPS);
        d.push(String(seconds));
        return await this.advance(seconds);
      }
      case "sweep": {
        await w.scheduler.sweep();
        return "swept";
      }
      case "fund_ach":
      case "fund_wire": {
        const cents = this.prng.int(10_000, 500_000);
        const ach = kind === "fund_ach";
        d.push(String(cents));
        const funded = await w.test.writer.write((tx) =>
          fundLine(tx, w.test, {
            companyId,
            lineId,
            paymentMethod: ach ? "ACH" : "WireTransfer",
            amountCents: cents,
            description: "simulated funding",
            largeDisbursement: false,
            requestFingerprint: `fund-${this.#sequence++}`,
          }, realNow)
        );
        if (!funded.ok) return `refused ${funded.code}`;
        if (ach) this.achFundings.push({ id: funded.value.funding.id, cents });
        else this.wiredCents += cents;
        return "funded";
      }
      case "funding_return": {
        if (this.achFundings.length === 0) return "no ACH funding";
        const funding = this.prng.pick(this.achFundings);
        d.push(`funding#${this.achFundings.indexOf(funding)}`);
        // The operator says the bank returned it: only true of a debit the bank never collected,
        // so a return the service accepts for a collected debit shows as a ledger difference.
        const answer = await w.cli("funding:return", { funding: funding.id });
        return answer.ok ? "returned" : `refused ${answer.code}`;
      }
      case "bank_answer": {
        const mode = this.prng.pick<UploadMode>(["refuse", "doubt_taken", "doubt_lost", "take"]);
        const checks = this.prng.chance(0.3);
        d.push(checks ? "check bank" : "ach bank", mode);
        (checks ? w.checkBank : w.bank).answers.push(mode);
        return "queued";
      }
      case "hand_mode": {
        w.bank.handMode = !w.bank.handMode;
        d.push(String(w.bank.handMode));
        return "set";
      }
      case "operator_files":
        return await this.operateFiles(d);
      case "check_void": {
        const payout = this.#pickPayout();
        if (!payout) return "no payout";
        d.push(this.#name(payout));
        const { rows } = await w.test.readClient.execute({
          sql: `SELECT c.check_number, coalesce(b.status, '') AS issue_file FROM checks c
                  LEFT JOIN rail_batches b ON b.id = c.issue_file_id
                WHERE c.payout_id = ? AND c.status = 'issued' ORDER BY c.rowid DESC LIMIT 1`,
          args: [payout.id],
        });
        if (rows.length === 0) return "no issued check";
        const answer = await w.cli("checks:void", {
          tin: SIM_TIN,
          number: String(rows[0].check_number),
          reason: "payee asked for another method",
        });
        return answer.ok ? "voided" : `refused ${answer.code}`;
      }
      case "race": {
        // Two job runners drain the same due jobs at once (issue case 2): at each moment of the
        // advance a second runner runs beside the one the clock's move starts. The banks take
        // every file while they race, so which runner hands a file over first decides nothing
        // the seed's later steps depend on.
        const seconds = this.prng.pick(CLOCK_JUMPS);
        d.push(String(seconds));
        const scripted = [w.bank.answers.splice(0), w.checkBank.answers.splice(0)] as const;
        try {
          return `${await this.advance(seconds, 2)}, raced`;
        } finally {
          w.bank.answers.push(...scripted[0]);
          w.checkBank.answers.push(...scripted[1]);
        }
      }
      case "crash": {
        const units = this.prng.int(0, 12);
        d.push(String(units));
        w.crash.unitsLeft = units;
        // The crash lands inside whatever the process does next.
        const seconds = this.prng.pick(CLOCK_JUMPS);
        d.push(`then advance ${seconds}`);
        return await this.advance(seconds);
      }
    }
    throw new Error(`unknown step ${kind}`);
  }

  /**
   * The company's own bank settings, saved by `bank:set` (at once in test): its cutoffs, a
   * balanced file, and a check account whose checks go stale after STALE_DAYS days.
   */
  async storeBankSettings(): Promise<void> {
    const path = `${this.world.dir}/bank.json`;
    await Deno.writeTextFile(
      path,
      JSON.stringify({
        ...validSettingsJson(),
        check_account: { ...liveCheckAccountJson(), stale_days: STALE_DAYS },
      }),
    );
    const saved = await this.world.cli("bank:set", { tin: SIM_TIN, file: path });
    if (!saved.ok) throw new Error(`bank:set refused the simulation's settings: ${saved.message}`);
    this.records.push({
      index: -1,
      step: `bank:set (stale after ${STALE_DAYS} days)`,
      outcome: "saved",
    });
  }

  #name(payout: SimPayout): string {
    return `payout#${this.payouts.indexOf(payout)}`;
  }

  #pickPayout(): SimPayout | null {
    return this.payouts.length === 0 ? null : this.prng.pick(this.payouts);
  }

  /** An amount to pay; now and then one ending in 99 cents, a card the sandbox's payee never spends. */
  #amount(): number {
    const cents = this.prng.int(100, 250_000);
    return this.prng.chance(0.25) ? cents - cents % 100 + 99 : cents;
  }

  async #choose(
    payout: SimPayout,
    method: "ach" | "check" | "vcc" | "instant_deposit" | "paypal" | "venmo",
    form: Record<string, string>,
  ): Promise<string> {
    const w = this.world;
    const { rows } = await w.test.readClient.execute({
      sql: `SELECT links FROM notifications WHERE payout_id = ? AND channel = 'email'
              AND links <> '[]' ORDER BY created_at DESC, rowid DESC LIMIT 1`,
      args: [payout.id],
    });
    if (rows.length === 0) return "not notified yet";
    const url = (JSON.parse(String(rows[0].links)) as string[])[0];
    const found = await findLink(w.databases, url.split("/portal/")[1]);
    if (!found) return "link not found";
    const portal = await portalPayout(w.test, found.link, null);
    const modality = offeredMethod(found.link, portal, method);
    if (!modality) return `not offered (${portal.status})`;
    const chosen = await chooseMethod(
      w.test,
      {
        runtime: w.runtime,
        secretBox: testSecretBox,
        increase: providerReachesOf("test", w.settings, w.test, testSecretBox).increase,
      },
      found.link,
      {
        payout: portal,
        modality,
        form,
      },
      {
        t: portalText("en"),
        client: { ip: "127.0.0.1", userAgent: "sim" },
        now: await domainNow(w.test, w.ids.companyId, w.clock.now()),
      },
    );
    return chosen.ok ? "chosen" : `refused ${chosen.code}`;
  }

  async #cancel(
    payout: SimPayout,
    via: "api" | "v1" | "console",
    realNow: number,
  ): Promise<string> {
    const w = this.world;
    const { companyId, lineId } = w.ids;
    if (via === "console") {
      const answer = await cancelPayoutAsOperator(
        w.test,
        { operator: null, origin: "console" },
        payout.id,
        realNow,
      );
      return answer.ok ? "canceled" : `refused ${answer.code}`;
    }
    if (via === "api" && payout.via === "api") {
      const answer = await w.test.writer.write((tx) =>
        cancelApiPayee(tx, w.test, {
          companyId,
          disbursementUuid: payout.disbursementUuid,
          payeeUuid: payout.payeeUuid,
        }, realNow)
      );
      return answer.ok ? "canceled" : `refused ${answer.code}`;
    }
    if (via === "v1" && payout.via === "v1") {
      const answer = await w.test.writer.write((tx) =>
        cancelV1Disbursement(tx, w.test, { companyId, lineId }, payout.disbursementUuid, realNow)
      );
      return answer.ok ? "canceled" : `refused ${answer.code}`;
    }
    return "not on that surface";
  }

  /**
   * Moves the sandbox clock `seconds` ahead, stopping at each moment the bank sends a file so
   * the file arrives when the bank sent it (before what falls due after it). With two runners a
   * second one drains the same due jobs beside the clock's own at each moment.
   */
  async advance(seconds: number, runners: 1 | 2 = 1): Promise<string> {
    const w = this.world;
    let now = await this.refreshNow();
    const target = now + seconds * 1000;
    let delivered = 0;
    let nextStep = 0;
    for (;;) {
      // Event by event: a job may hand the bank a file whose answer falls due before the next
      // job, and the bank's file must arrive at its own time. So each move runs what is due at
      // one moment (and what that schedules for the same moment), never past the next event.
      // What a provider takes during this move, it takes at the move's moment.
      this.domainNowCached = now + nextStep * 1000;
      const [moved] = await Promise.all([
        advanceSandboxClock(
          w.test,
          w.ids.companyId,
          nextStep,
          w.clock.now(),
          w.handlers,
          { clock: w.clock },
        ),
        runners === 2
          ? runDueJobs(w.test, w.ids.companyId, this.domainNowCached, w.handlers, {
            clock: w.clock,
          })
          : 0,
      ]);
      now = moved.now;
      this.domainNowCached = now;
      for (let delivery = w.bank.nextDue(now); delivery; delivery = w.bank.nextDue(now)) {
        try {
          await this.#deliver(delivery.fileName, delivery.content, now);
        } catch (error) {
          // The file stays in the inbound directory until an import of it commits.
          w.bank.postpone(delivery, now);
          throw error;
        }
        delivered++;
      }
      w.checkBank.present(now);
      for (const item of this.paypal.apply(now)) {
        if (!this.paypal.webhookArrives(item)) continue;
        try {
          await this.#paypalWebhook(item);
        } catch (error) {
          // Unanswered, PayPal posts it again a little later.
          this.paypal.redeliver(item, now + 60_000);
          throw error;
        }
      }
      for (let paid = w.checkBank.nextDue(now); paid; paid = w.checkBank.nextDue(now)) {
        try {
          await this.#deliverPaidItems(paid.fileName, paid.content, now);
        } catch (error) {
          w.checkBank.postpone(paid, now);
          throw error;
        }
        delivered++;
      }
      if (now >= target) break;
      const stop = Math.min(
        target,
        w.bank.pending[0]?.at ?? Infinity,
        w.checkBank.nextReportAt(),
        w.checkBank.nextPresentment(now),
        this.paypal.pending[0]?.at ?? Infinity,
        await this.#nextJobAfter(now),
      );
      nextStep = Math.max(1, Math.ceil((stop - now) / 1000));
    }
    return [
      "advanced",
      ...(delivered > 0 ? [`${delivered} bank files`] : []),
    ].join(", ");
  }

  /** The due time of the company's next pending job after `now`, or Infinity. */
  async #nextJobAfter(now: number): Promise<number> {
    const { rows } = await this.world.test.readClient.execute({
      sql: `SELECT min(due_at) AS due FROM scheduled_jobs
            WHERE company_id = ? AND done_at IS NULL AND due_at > ?`,
      args: [this.world.ids.companyId, now],
    });
    return rows[0]?.due === null || rows[0]?.due === undefined ? Infinity : Number(rows[0].due);
  }

  /** A file from the bank, imported by the inbound poll's path or by an operator's ach:import. */
  async #deliver(fileName: string, content: string, now: number): Promise<void> {
    const w = this.world;
    if (this.prng.chance(0.5)) {
      const imported = await importAchFile(w.railDeps(), {
        content: new TextEncoder().encode(content),
        fileName,
        source: "sftp",
        importedBy: null,
        companyId: w.ids.companyId,
      }, now);
      if (!imported.ok) throw new InvariantViolation(`bank file refused: ${imported.message}`);
      return;
    }
    const path = `${w.dir}/${fileName}`;
    await Deno.writeTextFile(path, content);
    const answer = await w.cli("ach:import", { file: path });
    if (!answer.ok) throw new InvariantViolation(`ach:import refused: ${answer.message}`);
  }

  /** PayPal posts its webhook of an item's new state; the service verifies it with PayPal. */
  async #paypalWebhook(item: ContractItem): Promise<void> {
    const w = this.world;
    const eventType = `PAYMENT.PAYOUTS-ITEM.${PAYPAL_EVENTS[item.transaction_status]}`;
    const { body, headers } = this.paypal.server.signedItemWebhook(eventType, item);
    const received = await receiveWebhook({
      database: w.test,
      paypal: providerReachesOf("test", w.settings, w.test, testSecretBox).paypal,
    }, {
      companyId: w.ids.companyId,
      headers: {
        authAlgo: headers["PAYPAL-AUTH-ALGO"],
        certUrl: headers["PAYPAL-CERT-URL"],
        transmissionId: headers["PAYPAL-TRANSMISSION-ID"],
        transmissionSig: headers["PAYPAL-TRANSMISSION-SIG"],
        transmissionTime: headers["PAYPAL-TRANSMISSION-TIME"],
      },
      body: JSON.stringify(body),
    }, w.clock.now());
    if (!received.ok) throw new InvariantViolation(`PayPal webhook refused: ${received.message}`);
  }

  /** An operator's action on an ACH file: `deno task admin <command>` on the test environment. */
  async #fileAction(
    command: "ach:void" | "ach:resolve" | "ach:mark-sent",
    fileId: string,
    as?: "transmitted" | "voided",
  ): Promise<{ ok: true } | { ok: false; code: string }> {
    return await this.world.cli(command, { file: fileId, ...(as ? { as } : {}) });
  }

  /** The check bank's paid items, imported by the inbound poll's path or checks:import-paid. */
  async #deliverPaidItems(fileName: string, content: string, now: number): Promise<void> {
    const w = this.world;
    if (this.prng.chance(0.5)) {
      const imported = await importPaidItems({
        database: w.test,
        environment: "test",
        runtime: w.runtime,
      }, {
        companyId: w.ids.companyId,
        content: new TextEncoder().encode(content),
        fileName,
        source: "sftp",
        importedBy: null,
      }, now);
      if (!imported.ok) throw new InvariantViolation(`paid items refused: ${imported.message}`);
      return;
    }
    const path = `${w.dir}/${fileName}`;
    await Deno.writeTextFile(path, content);
    const answer = await w.cli("checks:import-paid", { tin: SIM_TIN, file: path });
    if (!answer.ok) throw new InvariantViolation(`checks:import-paid refused: ${answer.message}`);
  }

  /**
   * An operator looks at the files: resolves an in-doubt file with what the bank says, and in
   * hand mode downloads a built file, uploads it by hand and marks it sent (or voids it).
   */
  async operateFiles(d: string[], all = false): Promise<string> {
    const w = this.world;
    const { rows } = await w.test.readClient.execute(
      `SELECT b.id, b.status, coalesce(f.file_name, c.file_name) AS file_name,
         CASE WHEN f.batch_id IS NULL THEN 'check' ELSE 'ach' END AS rail
       FROM rail_batches b LEFT JOIN ach_files f ON f.batch_id = b.id
         LEFT JOIN check_files c ON c.batch_id = b.id
       WHERE b.status IN ('built', 'in_doubt') AND (f.batch_id IS NOT NULL OR c.batch_id IS NOT NULL)
       ORDER BY b.created_at, b.rowid`,
    );
    if (rows.length === 0) return "nothing to do";
    const outcomes: string[] = [];
    for (const row of all ? rows : [this.prng.pick(rows)]) {
      const id = String(row.id);
      const fileName = String(row.file_name);
      // A check file's name ends with its batch id, which is random: the step names its day.
      const name = row.rail === "check"
        ? `file ${fileName.replace(/_rbt_\w+/, "")}`
        : `file ${fileName.slice(-14)}`;
      if (row.rail === "check") {
        if (row.status !== "in_doubt") continue;
        const as = w.checkBank.has(fileName) ? "transmitted" : "not_received";
        d.push(`resolve check ${name} as ${as}`);
        const answer = await w.cli("rails:resolve", { file: id, as });
        outcomes.push(answer.ok ? "resolved" : `resolve refused ${answer.code}`);
        continue;
      }
      if (row.status === "in_doubt") {
        const as = w.bank.has(fileName) ? "transmitted" : "voided";
        d.push(`resolve ${name} as ${as}`);
        const answer = await this.#fileAction("ach:resolve", id, as);
        outcomes.push(answer.ok ? "resolved" : `resolve refused ${answer.code}`);
        continue;
      }
      const action = all ? "void" : this.prng.pick(["send", "void", "download_void"]);
      d.push(`${action} ${name}`);
      if (action === "void") {
        const answer = await this.#fileAction("ach:void", id);
        outcomes.push(answer.ok ? "voided" : `void refused ${answer.code}`);
        continue;
      }
      const out = `${w.dir}/download-${id}.ach`;
      const downloaded = await w.cli("ach:download", { file: id, out });
      if (!downloaded.ok) {
        outcomes.push(`download refused ${downloaded.code}`);
        continue;
      }
      const content = await Deno.readTextFile(out);
      await Deno.remove(out);
      if (action === "download_void") {
        // The operator uploaded it by hand, then voided it.
        w.bank.take(fileName, content);
        const answer = await this.#fileAction("ach:void", id);
        outcomes.push(answer.ok ? "downloaded, uploaded, voided" : `void refused ${answer.code}`);
        continue;
      }
      // Marked sent as the operator uploads it: a file the service refuses to mark is not one
      // for the operator to upload (it goes by the service's own transport).
      const answer = await this.#fileAction("ach:mark-sent", id);
      if (answer.ok) w.bank.take(fileName, content);
      outcomes.push(answer.ok ? "sent by hand" : `mark-sent refused ${answer.code}`);
    }
    return outcomes.join(", ");
  }

  /**
   * The end of the run: no more crashes or odd answers; operators settle every held and
   * in-doubt file, and time runs on until every outcome the bank owes has arrived.
   */
  async drain(): Promise<void> {
    const w = this.world;
    w.crash.unitsLeft = null;
    w.bank.answers.length = 0;
    w.checkBank.answers.length = 0;
    w.bank.handMode = false;
    for (let round = 0; round < 10; round++) {
      const d: string[] = ["drain"];
      const files = await this.operateFiles(d, true);
      await this.resolveExceptions(d);
      const advanced = await this.advance(5 * DAY);
      await w.scheduler.sweep();
      this.records.push({
        index: this.records.length,
        step: d.join(" "),
        outcome: `${files}; ${advanced}`,
      });
      await checkStep(this.view(), this.records);
      if (
        files === "nothing to do" && w.bank.pending.length === 0 &&
        !w.checkBank.owesReports() && this.paypal.pending.length === 0 &&
        !(await this.#unsettled())
      ) {
        break;
      }
    }
  }

  /**
   * An operator closes every open exception with what the bank says: the bank's payment stands
   * (the simulated banks never take a payment back).
   */
  async resolveExceptions(d: string[]): Promise<void> {
    const w = this.world;
    const { rows } = await w.test.readClient.execute(
      `SELECT 'rail' AS kind, id FROM rail_exceptions WHERE status = 'open'
       UNION ALL SELECT 'check', id FROM check_exceptions WHERE status = 'open'`,
    );
    for (const row of rows) {
      const answer = await w.cli(
        row.kind === "rail" ? "rails:resolve-exception" : "checks:resolve-exception",
        { exception: String(row.id), resolution: "payment_stands", note: "the bank paid it" },
      );
      d.push(`${row.kind} exception ${answer.ok ? "resolved" : `refused ${answer.code}`}`);
    }
  }

  /**
   * Whether money is still on its way: a file not settled, a payout in flight, an exception an
   * operator has yet to resolve, or a virtual card whose balance is not known yet (its expiry).
   */
  async #unsettled(): Promise<boolean> {
    const { rows } = await this.world.test.readClient.execute(
      `SELECT 1 FROM rail_exceptions WHERE status = 'open'
       UNION ALL SELECT 1 FROM check_exceptions WHERE status = 'open'
       UNION ALL SELECT 1 FROM rail_batches WHERE status IN ('built', 'transmitting', 'in_doubt')
       UNION ALL SELECT 1 FROM payouts p WHERE status IN ('modality_selected', 'funds_sent')
         AND NOT EXISTS (SELECT 1 FROM checks c WHERE c.payout_id = p.id AND c.status = 'issued')
       UNION ALL SELECT 1 FROM virtual_cards WHERE reclaimed_cents IS NULL
       LIMIT 1`,
    );
    return rows.length > 0;
  }
}
