/**
 * The simulated world of one seed: the service's two databases (copied from a migrated, seeded
 * template), its job handlers on the simulated bank, the scheduler of its worker loop, a fake real
 * clock, and a crash switch. A crash refuses every write from a chosen unit on (the process died
 * at that unit boundary: what committed before stays in the file); the world then closes what it
 * holds in memory and opens everything again from the database files, as a restarted process.
 */
import { type Database, openDatabase } from "../../db/client.ts";
import { type JobHandlers, Scheduler } from "../../db/scheduler.ts";
import type { WriteUnit } from "../../db/writer.ts";
import { addFunds } from "../../lib/funding/store.ts";
import {
  addMembership,
  createCompany,
  createLine,
  createUser,
  type Databases,
} from "../../lib/identity/admin.ts";
import { runAdminCommand } from "../../lib/admin/commands.ts";
import { readBankSettings } from "../../lib/ach/bank_store.ts";
import { statementAccountsOf } from "../../lib/ach/bank_settings.ts";
import type { ExpectedMove } from "../../lib/reconciliation/matching.ts";
import {
  SANDBOX_STATEMENT_JOB,
  sandboxStatementJob,
  sandboxStatementPlanning,
} from "../../lib/reconciliation/sandbox_statements.ts";
import { batchServiceDeps, jobHandlersOf } from "../../lib/payouts/runtime.ts";
import { payoutRuntime, type RuntimeSettings } from "../../lib/payouts/settings.ts";
import type { PayoutRuntime } from "../../lib/payouts/jobs.ts";
import { FakeClock } from "../../lib/platform/clock.ts";
import type { Environment } from "../../lib/platform/config.ts";
import { testSecretBox } from "../helpers.ts";
import { PaypalContractServer } from "../paypal_contract_server.ts";
import { configurePaypal } from "../paypal_helpers.ts";
import type { SimAchBank } from "./bank.ts";
import type { SimCheckBank } from "./check_bank.ts";

/** A Monday, 14:00 UTC (09:00 New York): the run's first real time. */
export const SIM_START = Date.UTC(2026, 0, 5, 14, 0, 0);
export const SIM_TIN = "555000111";
export const SIM_LINE = "auto";
export const SIM_USER = "ops@sim-mutual.test";
export const SIM_SETTINGS: RuntimeSettings = {
  offerTtlDays: 90,
  baseUrl: "http://127.0.0.1:8000",
};
/** The line's starting funds (test environment), as a received wire. */
export const SIM_START_FUNDS_CENTS = 5_000_000;

/** The process died: every write from the crash point on is refused with this. */
export class SimulatedCrash extends Error {
  constructor() {
    super("simulated crash: the process stopped at a write-unit boundary");
    this.name = "SimulatedCrash";
  }
}

/** What the template holds, by id, for every seed. */
export interface TemplateIds {
  readonly companyId: string;
  readonly lineId: string;
  readonly userId: string;
}

export interface Template extends TemplateIds {
  readonly dir: string;
  /** PayPal for every seed: the contract server the company's PayPal settings name. */
  readonly paypal: PaypalContractServer;
}

const DB_OPTIONS = { busyTimeoutMs: 5000, unitsPerGroupMax: 512, readCacheEntries: 1000 };

function openAt(dir: string, environment: Environment): Promise<Database> {
  return openDatabase({ environment, url: `file:${dir}/${environment}.db`, ...DB_OPTIONS });
}

/** Where temporary databases go: memory when the machine has it (fsync costs nothing there). */
async function tempRoot(): Promise<string | undefined> {
  try {
    return (await Deno.stat("/dev/shm")).isDirectory ? "/dev/shm" : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Both databases migrated, with one company (line `auto`, a user, $50,000.00 available in test)
 * and its retry policy: the state every seed starts from, copied file by file.
 */
export async function createTemplate(): Promise<Template> {
  const dir = await Deno.makeTempDir({ prefix: "sim-template-", dir: await tempRoot() });
  const paypal = PaypalContractServer.inProcess();
  const databases: Databases = { test: await openAt(dir, "test"), live: await openAt(dir, "live") };
  const unwrap = <T>(result: { ok: true; value: T } | { ok: false; message: string }): T => {
    if (!result.ok) throw new Error(`simulation template: ${result.message}`);
    return result.value;
  };
  try {
    const { company } = unwrap(
      await createCompany(databases, { name: "Sim Mutual", tin: SIM_TIN }, SIM_START),
    );
    const { user } = unwrap(await createUser(databases, { email: SIM_USER }, SIM_START));
    unwrap(await addMembership(databases, { email: SIM_USER, tin: SIM_TIN }, SIM_START));
    const { line } = unwrap(
      await createLine(databases, { tin: SIM_TIN, code: SIM_LINE }, SIM_START),
    );
    await databases.test.writer.write(async (tx) => {
      // Transient bank answers are retried automatically; every other failure is re-offered.
      await tx.execute({
        sql: "UPDATE companies SET retry_max = 2, retry_reasons = ? WHERE id = ?",
        args: [JSON.stringify(["R09", "R16"]), company.id],
      });
      unwrap(
        await addFunds(
          tx,
          {
            companyId: company.id,
            lineId: line.id,
            paymentMethod: "WireTransfer",
            amountCents: SIM_START_FUNDS_CENTS,
            description: "simulation starting funds",
            largeDisbursement: false,
            requestFingerprint: "sim-start",
          },
          "test",
          SIM_START,
        ),
      );
    });
    await configurePaypal(databases.test, paypal, company.id, SIM_START);
    return { dir, companyId: company.id, lineId: line.id, userId: user.id, paypal };
  } finally {
    await databases.test.close();
    await databases.live.close();
  }
}

export async function removeTemplate(template: Template): Promise<void> {
  await template.paypal.close();
  await Deno.remove(template.dir, { recursive: true });
}

/** Counts write units and refuses every one from the armed point on. */
class CrashSwitch {
  /** Units still allowed before the crash; null: not armed. */
  unitsLeft: number | null = null;
  crashed = false;
  units = 0;

  install(database: Database): void {
    const writer = database.writer;
    const write = writer.write.bind(writer);
    writer.write = <T>(unit: WriteUnit<T>): Promise<T> => {
      if (this.crashed) return Promise.reject(new SimulatedCrash());
      if (this.unitsLeft !== null) {
        if (this.unitsLeft === 0) {
          this.crashed = true;
          return Promise.reject(new SimulatedCrash());
        }
        this.unitsLeft--;
      }
      this.units++;
      return write(unit);
    };
  }
}

/**
 * A fee the sandbox bank adds to the first account of the first day it states, one the service
 * never expected: reconciliation must show exactly that exception. `date` is that day, once
 * stated.
 */
export interface InjectedFee {
  readonly amountCents: number;
  date: string | null;
}

/**
 * A line the sandbox bank leaves out of its statement although it made the move: the first of its
 * kind it states (a provider's settlement, or a late ACH return). Reconciliation must show exactly
 * that move as expected and not reported. `move` and `date` are set once it is left out.
 */
export interface MissingLine {
  readonly kind: "provider_settlement" | "late_return";
  move: ExpectedMove | null;
  date: string | null;
}

/** Whether `move` is of the kind a missing line leaves out. */
export function missingKindOf(move: ExpectedMove): MissingLine["kind"] | null {
  if (move.optional) return null;
  if (move.kind === "provider_settlement") return "provider_settlement";
  // A return applied after its entry completed, as the service words it.
  if (move.kind === "ach_return" && move.description.startsWith("the late ")) return "late_return";
  return null;
}

/** One seed's service, restartable from its files. */
export class World {
  readonly clock = new FakeClock(SIM_START);
  readonly runtime: PayoutRuntime = payoutRuntime("test", SIM_SETTINGS);
  readonly crash = new CrashSwitch();
  databases!: Databases;
  handlers!: JobHandlers;
  scheduler!: Scheduler;
  restarts = 0;
  /** The seed's injected differences, if it has them (set before the first step). */
  injectedFee: InjectedFee | null = null;
  readonly missingLines: MissingLine[] = [];
  /** The ACH file whose kept content the seed altered as the bank refused it: never to reach it. */
  alteredFile: string | null = null;

  /** The settings the service runs with: its rails composed on this world's banks. */
  readonly settings: RuntimeSettings;

  private constructor(
    readonly dir: string,
    readonly ids: TemplateIds,
    readonly bank: SimAchBank,
    readonly checkBank: SimCheckBank,
    paypal: PaypalContractServer,
  ) {
    this.settings = {
      ...SIM_SETTINGS,
      rails: {
        achTransport: bank,
        checkTransport: checkBank,
        paypalTimeoutMs: 5_000,
        // PayPal's contract server answers in process: the simulation opens no socket.
        paypalFetch: paypal.fetch,
      },
      // The sandbox's Lithic dates its cards and its payees' purchases on this world's clock.
      clock: this.clock,
    };
  }

  /** A copy of the template, opened as a started service would open it. */
  static async open(
    template: Template,
    bank: SimAchBank,
    checkBank: SimCheckBank,
  ): Promise<World> {
    const dir = await Deno.makeTempDir({ prefix: "sim-seed-", dir: await tempRoot() });
    for (const environment of ["test", "live"]) {
      await Deno.copyFile(`${template.dir}/${environment}.db`, `${dir}/${environment}.db`);
    }
    const world = new World(dir, template, bank, checkBank, template.paypal);
    await world.#start();
    return world;
  }

  get test(): Database {
    return this.databases.test;
  }

  async #start(): Promise<void> {
    this.databases = { test: await openAt(this.dir, "test"), live: await openAt(this.dir, "live") };
    this.crash.install(this.databases.test);
    const database = this.databases.test;
    this.handlers = {
      ...jobHandlersOf("test", this.settings, database, testSecretBox),
      [SANDBOX_STATEMENT_JOB]: async (tx, job) => {
        const fee = this.injectedFee;
        const settings = await readBankSettings(tx, testSecretBox, "test", job.companyId);
        const day = String(job.payload.date);
        // A unit that crashed runs again for the same day: the fee goes into that day alone.
        if (fee !== null && settings !== null) fee.date ??= day;
        const lines = fee === null || settings === null || fee.date !== day ? [] : [{
          accountNumber: statementAccountsOf(settings)[0].accountNumber,
          typeCode: "699",
          amountCents: fee.amountCents,
          text: "SIM BANK FEE",
        }];
        const statement = sandboxStatementJob({
          database,
          environment: "test",
          secretBox: testSecretBox,
          inject: () => lines,
          omit: (companyId, date, move) => {
            const missing = this.missingLines.find((m) => m.kind === missingKindOf(move));
            if (missing === undefined || companyId !== this.ids.companyId) return false;
            // A unit that crashed runs again for the same day: the same move is left out.
            if (missing.move === null) {
              missing.move = move;
              missing.date = date;
            }
            return missing.move.subjectId === move.subjectId && missing.move.kind === move.kind;
          },
        });
        if (typeof statement !== "function") throw new Error("the statement job runs in a unit");
        await statement(tx, job);
      },
    };
    this.scheduler = new Scheduler(
      { test: this.databases.test, live: this.databases.live },
      { test: this.handlers, live: {} },
      this.clock,
      // As the service's: a company whose money moves gets the sandbox bank's statements.
      { upkeep: [sandboxStatementPlanning(testSecretBox)] },
    );
    this.bank.settings ??= await readBankSettings(
      this.databases.test.readClient,
      testSecretBox,
      "test",
      this.ids.companyId,
    );
  }

  /**
   * The process died: what it held in memory is gone. Opens everything again from the files,
   * later in real time by `downMs` (a restart takes a while; leases of claims run out by then).
   */
  async restart(downMs: number): Promise<void> {
    this.crash.crashed = false;
    this.crash.unitsLeft = null;
    // The writer refuses nothing now, so closing it commits no more than what was queued
    // before the crash point (the switch let those through).
    await this.databases.test.close();
    await this.databases.live.close();
    this.clock.advance(downMs);
    this.restarts++;
    await this.#start();
  }

  /** What the service's own paths (an import of a bank's file) run on: its composed rails. */
  railDeps() {
    return batchServiceDeps({
      environment: "test",
      database: this.test,
      liveDatabase: this.databases.live,
      secretBox: testSecretBox,
      runtimeSettings: this.settings,
    });
  }

  /** An operator's CLI command on the test environment (dev mode: no session needed). */
  cli(name: string, flags: Record<string, string>) {
    return runAdminCommand(
      {
        databases: this.databases,
        now: this.clock.now(),
        keyGraceSeconds: 86_400,
        secretBox: testSecretBox,
        runtimeSettings: this.settings,
        dev: true,
        origin: "cli",
        sessionToken: null,
        input: {},
      },
      name,
      { environment: "test", ...flags },
    );
  }

  /** Closes both databases; `keep` leaves the files for a look (the path is printed). */
  async close(keep = false): Promise<void> {
    await this.databases.test.close().catch(() => {});
    await this.databases.live.close().catch(() => {});
    if (keep) console.log(`kept the seed's databases in ${this.dir}`);
    else await Deno.remove(this.dir, { recursive: true });
  }
}
