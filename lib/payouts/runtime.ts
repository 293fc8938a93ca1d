/**
 * The job handlers of each environment: ACH and checks through bank files in both (the sandbox
 * bank in test, SFTP or an admin's upload in live), PayPal and Venmo through PayPal's Payouts API
 * virtual cards through Lithic and instant deposit through Increase (each the sandbox's simulator
 * for a test company without settings, as `providerReachesOf` decides), the bank's imports, and
 * the operator's document checks.
 */
import { unclaimedJobHandlers } from "../obligations/unclaimed.ts";
import type { Environment } from "../platform/config.ts";
import { type RailDirectory, railDirectory } from "../rails/seam.ts";
import { unconfiguredRail } from "../rails/live.ts";
import {
  achRail,
  achSandboxBank,
  type AchTransport,
  sandboxBankTransport,
  sftpTransport,
} from "../ach/rail.ts";
import { domainJobTime, type RailPolicy, realJobTime } from "../rails/engine.ts";
import type { BatchServiceDeps } from "../rails/batches_service.ts";
import type { BatchRailSet } from "../rails/batch.ts";
import {
  checkRail,
  type CheckTransport,
  sandboxCheckBank,
  sftpCheckTransport,
} from "../checks/rail.ts";
import { paypalRail } from "../paypal/rail.ts";
import { sandboxPaypalJobs } from "../paypal/sandbox_paypal.ts";
import { cardRail } from "../cards/rail.ts";
import { cardJobHandlers } from "../cards/jobs.ts";
import { type BoundReaches, providerReachesOf } from "./provider_reaches.ts";
import { lobMailingTransport, lobTrackJob } from "../lob/mailer.ts";
import { lobCancelJob } from "../lob/cancel.ts";
import { instantRail } from "../instant/rail.ts";
import { instantJobHandlers } from "../instant/jobs.ts";
import {
  SANDBOX_LATE_RETURNS_JOB,
  SANDBOX_RETURNS_JOB,
  sandboxLateReturnsJob,
  sandboxReturnsJob,
} from "../ach/sandbox_bank.ts";
import {
  SANDBOX_STATEMENT_JOB,
  sandboxStatementJob,
} from "../reconciliation/sandbox_statements.ts";
import { INBOUND_POLL_JOB, inboundPollJob } from "../ach/inbound.ts";
import { importResumeJob } from "../ach/import_resume.ts";
import { ACH_IMPORT_RESUME_JOB } from "../ach/import_rules.ts";
import { batchPayoutMoves, payoutJobHandlers, type PayoutRuntime } from "./jobs.ts";
import { payoutRuntime, type RuntimeSettings } from "./settings.ts";
import { documentJobHandlers } from "../documents/jobs.ts";
import type { Database } from "../../db/client.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { JobHandlers } from "../../db/scheduler.ts";

/**
 * What the composition takes instead of an environment's own: `achTransport` and `checkTransport`
 * replace its bank (tests, the simulation), the timeouts and the file size are shortened by tests.
 */
export interface RailOptions {
  readonly achTransport?: AchTransport;
  readonly checkTransport?: CheckTransport;
  /** How long a call to PayPal may take before it counts as unanswered (tests shorten it). */
  readonly paypalTimeoutMs?: number;
  /**
   * What carries the calls to the PayPal host a company's settings name: the network's fetch,
   * unless the simulation answers them in process (its contract test server, with no socket).
   */
  readonly paypalFetch?: typeof fetch;
  /** How long a call to Lithic may take before it counts as unanswered (tests shorten it). */
  readonly lithicTimeoutMs?: number;
  /** How long a call to Lob may take before it counts as unanswered (tests shorten it). */
  readonly lobTimeoutMs?: number;
  /** How long a call to Increase may take before it counts as unanswered (tests shorten it). */
  readonly increaseTimeoutMs?: number;
  /** Entries one batch takes at most (BATCH_ENTRIES_MAX unless a test lowers it). */
  readonly batchEntriesMax?: number;
}

/** What an environment's rails are built on. */
interface RailDeps extends RailOptions {
  readonly environment: Environment;
  readonly database: Database;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  readonly reaches: BoundReaches;
}

/** An environment's rails as the composition root built them. */
export interface EnvironmentRails {
  readonly runtime: PayoutRuntime;
  /** How its companies reach each provider. */
  readonly reaches: BoundReaches;
  /** The rail of each method. */
  readonly directory: RailDirectory;
  /** Its batch rails, with the payout moves of their entries. */
  readonly batch: BatchRailSet;
}

/**
 * The composition root of an environment's rails, the one place they are built: its jobs, the
 * operators' batch actions (CLI and console), the approved releases and resolutions, and an
 * import that finds a file in doubt all run on what this builds from the same settings.
 */
export function composeRails(
  environment: Environment,
  settings: RuntimeSettings,
  database: Database,
  secretBox: SecretBox,
): EnvironmentRails {
  const runtime = payoutRuntime(environment, settings);
  const reaches = providerReachesOf(environment, settings, database, secretBox);
  const directory = railsOf({
    environment,
    database,
    secretBox,
    runtime,
    reaches,
    ...settings.rails,
  });
  return {
    runtime,
    reaches,
    directory,
    batch: { rails: directory.batchRails(), moves: batchPayoutMoves(runtime) },
  };
}

/**
 * The rails of an environment: ACH goes through bank files in both, handed to the sandbox bank
 * in test and to the company's bank in live; postal and digital checks through positive-pay and
 * print files the same way; PayPal and Venmo through PayPal's Payouts API for a company with
 * PayPal settings; virtual cards through Lithic and instant deposit through Increase, each
 * through the provider the company reaches (`providerReachesOf`).
 */
function railsOf(deps: RailDeps): RailDirectory {
  const test = deps.environment === "test";
  const policy = railPolicyOf(deps.environment, deps.runtime);
  const ach = achRail({
    ...deps,
    policy,
    transport: deps.achTransport ?? (test ? sandboxBankTransport : sftpTransport),
    sandboxBank: test ? achSandboxBank : null,
  });
  // A company whose Lob settings say so has its print files mailed by Lob, in either environment.
  const check = checkRail({
    ...deps,
    policy,
    transport: lobMailingTransport(
      deps.checkTransport ?? (test ? sandboxCheckBank : sftpCheckTransport),
      { database: deps.database, secretBox: deps.secretBox, timeoutMs: deps.lobTimeoutMs },
    ),
  });
  const paypal = paypalRail({ ...deps, policy, paypal: deps.reaches.paypal });
  return railDirectory(unconfiguredRail, {
    ach,
    check,
    digital_check: check,
    paypal,
    venmo: paypal,
  }, {
    vcc: cardRail({ ...deps, policy, lithic: deps.reaches.lithic }),
    instant_deposit: instantRail({ ...deps, policy, increase: deps.reaches.increase }),
  });
}

/**
 * The rail engine's rules of an environment: live decides with the real time a job runs, files
 * over the approval limit wait for a second admin and in-doubt resolutions too; the sandbox bank
 * keeps the sandbox clock and never waits.
 */
export function railPolicyOf(environment: Environment, runtime: PayoutRuntime): RailPolicy {
  const live = environment === "live";
  return {
    environment,
    jobTime: live ? realJobTime : domainJobTime,
    releaseLimitCents: live ? runtime.bankFileApprovalLimitCents : null,
    dualControl: live,
  };
}

/** What operators' batch actions (and an ACH import) run on, for an environment's database. */
export function batchServiceDeps(deps: {
  readonly environment: Environment;
  readonly database: Database;
  readonly liveDatabase: Database;
  readonly secretBox: SecretBox;
  readonly runtimeSettings: RuntimeSettings;
}): BatchServiceDeps & { readonly environment: Environment; readonly runtime: PayoutRuntime } {
  const { runtime, batch } = composeRails(
    deps.environment,
    deps.runtimeSettings,
    deps.database,
    deps.secretBox,
  );
  return {
    environment: deps.environment,
    database: deps.database,
    liveDatabase: deps.liveDatabase,
    secretBox: deps.secretBox,
    runtime,
    ...batch,
  };
}

/** The job handlers of an environment's database, on the rails `composeRails` builds. */
export function jobHandlersOf(
  environment: Environment,
  settings: RuntimeSettings,
  database: Database,
  secretBox: SecretBox,
): JobHandlers {
  const { runtime, reaches, directory, batch } = composeRails(
    environment,
    settings,
    database,
    secretBox,
  );
  const options = settings.rails ?? {};
  const deps = { environment, database, secretBox, runtime };
  const importDeps = { ...deps, rails: batch.rails };
  return {
    ...payoutJobHandlers(runtime, directory),
    ...cardJobHandlers({
      ...deps,
      policy: railPolicyOf(environment, runtime),
      lithicTimeoutMs: options.lithicTimeoutMs,
      lithic: reaches.lithic,
      sandboxLithic: reaches.simulators.sandboxLithic,
    }),
    ...lobTrackJob({
      ...deps,
      timeoutMs: options.lobTimeoutMs,
      jobTime: railPolicyOf(environment, runtime).jobTime,
    }),
    ...lobCancelJob({
      ...deps,
      timeoutMs: options.lobTimeoutMs,
      jobTime: railPolicyOf(environment, runtime).jobTime,
    }),
    ...instantJobHandlers({
      ...deps,
      policy: railPolicyOf(environment, runtime),
      increaseTimeoutMs: options.increaseTimeoutMs,
      increase: reaches.increase,
    }),
    [SANDBOX_RETURNS_JOB]: sandboxReturnsJob(importDeps),
    [SANDBOX_LATE_RETURNS_JOB]: sandboxLateReturnsJob(importDeps),
    [SANDBOX_STATEMENT_JOB]: sandboxStatementJob(deps),
    [INBOUND_POLL_JOB]: inboundPollJob(importDeps),
    [ACH_IMPORT_RESUME_JOB]: importResumeJob(importDeps),
    ...(reaches.simulators.paypal
      ? sandboxPaypalJobs({
        database,
        paypal: reaches.paypal,
        simulator: reaches.simulators.paypal,
      })
      : {}),
    ...documentJobHandlers(),
    ...unclaimedJobHandlers({ environment, notifications: runtime.notifications }),
  };
}

/** The job handlers of both environments. */
export function jobHandlersByEnvironment(
  settings: RuntimeSettings,
  databases: Readonly<Record<Environment, Database>>,
  secretBox: SecretBox,
): Record<Environment, JobHandlers> {
  return {
    test: jobHandlersOf("test", settings, databases.test, secretBox),
    live: jobHandlersOf("live", settings, databases.live, secretBox),
  };
}
