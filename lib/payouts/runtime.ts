/**
 * The job handlers of each environment: ACH and checks through bank files in both (the sandbox
 * bank in test, SFTP or an admin's upload in live), PayPal and Venmo through PayPal's Payouts API,
 * the sandbox's per-payout rails for the other methods in test and the unconfigured live rail for
 * them in live, the bank's imports, and the operator's document checks.
 */
import { unclaimedJobHandlers } from "../obligations/unclaimed.ts";
import { type Config, configDefaults, type Environment } from "../platform/config.ts";
import { type RailDirectory, railDirectory } from "../rails/seam.ts";
import { sandboxRail } from "../rails/sandbox.ts";
import { unconfiguredLiveRail } from "../rails/live.ts";
import {
  achRail,
  achSandboxBank,
  type AchTransport,
  sandboxBankTransport,
  sftpTransport,
} from "../ach/rail.ts";
import { domainJobTime, type RailPolicy, realJobTime } from "../rails/engine.ts";
import type { BatchServiceDeps } from "../rails/batches_service.ts";
import {
  checkRail,
  type CheckTransport,
  sandboxCheckBank,
  sftpCheckTransport,
} from "../checks/rail.ts";
import { paypalRail } from "../paypal/rail.ts";
import { cardRail } from "../cards/rail.ts";
import { cardJobHandlers } from "../cards/jobs.ts";
import { lobMailingTransport, lobTrackJob } from "../lob/mailer.ts";
import { lobCancelJob } from "../lob/cancel.ts";
import { instantRail } from "../instant/rail.ts";
import { instantJobHandlers } from "../instant/jobs.ts";
import { SANDBOX_RETURNS_JOB, sandboxReturnsJob } from "../ach/sandbox_bank.ts";
import {
  SANDBOX_STATEMENT_JOB,
  sandboxStatementJob,
} from "../reconciliation/sandbox_statements.ts";
import { INBOUND_POLL_JOB, inboundPollJob } from "../ach/inbound.ts";
import { batchPayoutMoves, payoutJobHandlers, type PayoutRuntime } from "./jobs.ts";
import { documentJobHandlers } from "../documents/jobs.ts";
import type { Database } from "../../db/client.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { JobHandlers } from "../../db/scheduler.ts";

export interface RuntimeSettings {
  readonly offerTtlDays: number;
  readonly baseUrl: string;
  /** contract §9: portal links expire after this many days (default 30). */
  readonly portalLinkTtlDays?: number;
  /** contract §11: resends a payee may get in any hour (default 5). */
  readonly resendsPerHourMax?: number;
  /** A live bank file over this total waits for a second admin (default $100,000.00). */
  readonly bankFileApprovalLimitCents?: number;
  /** The MICR font CHECK_MICR_FONT named, read at start (default none). */
  readonly micrFont?: Uint8Array | null;
}

/** The runtime settings a configuration gives. */
export function runtimeSettingsOf(config: Config): RuntimeSettings {
  return {
    offerTtlDays: config.limits.OFFER_TTL_DAYS,
    portalLinkTtlDays: config.limits.PORTAL_LINK_TTL_DAYS,
    resendsPerHourMax: config.limits.RESEND_PER_HOUR_MAX,
    bankFileApprovalLimitCents: config.limits.BANK_FILE_APPROVAL_LIMIT_CENTS,
    baseUrl: config.baseUrl,
    micrFont: config.checkMicrFont,
  };
}

/**
 * What an environment's rails are built on; `achTransport` and `checkTransport` replace the
 * environment's bank (tests, the simulation).
 */
export interface RailDeps {
  readonly environment: Environment;
  readonly database: Database;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  readonly achTransport?: AchTransport;
  readonly checkTransport?: CheckTransport;
  /** How long a call to PayPal may take before it counts as unanswered (tests shorten it). */
  readonly paypalTimeoutMs?: number;
  /** How long a call to Lithic may take before it counts as unanswered (tests shorten it). */
  readonly lithicTimeoutMs?: number;
  /** How long a call to Lob may take before it counts as unanswered (tests shorten it). */
  readonly lobTimeoutMs?: number;
  /** How long a call to Increase may take before it counts as unanswered (tests shorten it). */
  readonly increaseTimeoutMs?: number;
  /** Entries one ACH file takes at most (BATCH_ENTRIES_MAX unless a test lowers it). */
  readonly batchEntriesMax?: number;
}

/**
 * The rails of an environment: ACH goes through bank files in both, handed to the sandbox bank
 * in test and to the company's bank in live; postal and digital checks through positive-pay and
 * print files the same way; PayPal and Venmo through PayPal's Payouts API for a company with
 * PayPal settings; virtual cards through Lithic and instant deposit through Increase for a
 * company with their settings. A test company without a provider's settings is paid by the
 * sandbox rail; in live the unconfigured rail refuses such a payout with `rail_not_configured`.
 */
export function railsOf(deps: RailDeps): RailDirectory {
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
  const paypal = paypalRail({ ...deps, policy });
  return railDirectory(test ? sandboxRail(deps.database) : unconfiguredLiveRail, {
    ach,
    check,
    digital_check: check,
    paypal,
    venmo: paypal,
  }, {
    vcc: cardRail({ ...deps, policy }),
    instant_deposit: instantRail({ ...deps, policy }),
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

/** What operators' batch actions run on, for an environment's database. */
export function batchServiceDeps(deps: {
  readonly environment: Environment;
  readonly database: Database;
  readonly liveDatabase: Database;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
}): BatchServiceDeps {
  return {
    database: deps.database,
    liveDatabase: deps.liveDatabase,
    secretBox: deps.secretBox,
    rails: railsOf(deps).batchRails(),
    moves: batchPayoutMoves(deps.runtime),
  };
}

/** The job handlers of an environment's database, on its rails. */
export function jobHandlersOf(
  environment: Environment,
  settings: RuntimeSettings,
  database: Database,
  secretBox: SecretBox,
  options: {
    readonly achTransport?: AchTransport;
    readonly checkTransport?: CheckTransport;
    readonly paypalTimeoutMs?: number;
    readonly lithicTimeoutMs?: number;
    readonly lobTimeoutMs?: number;
    readonly increaseTimeoutMs?: number;
    readonly batchEntriesMax?: number;
  } = {},
): JobHandlers {
  const runtime = payoutRuntime(environment, settings);
  const deps = { environment, database, secretBox, runtime };
  return {
    ...payoutJobHandlers(runtime, railsOf({ ...deps, ...options })),
    ...cardJobHandlers({
      ...deps,
      policy: railPolicyOf(environment, runtime),
      lithicTimeoutMs: options.lithicTimeoutMs,
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
    }),
    [SANDBOX_RETURNS_JOB]: sandboxReturnsJob(deps),
    [SANDBOX_STATEMENT_JOB]: sandboxStatementJob(deps),
    [INBOUND_POLL_JOB]: inboundPollJob(deps),
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

/** What payout moves need to know of their environment: its offer lifetime and links. */
export function payoutRuntime(
  environment: Environment,
  settings: RuntimeSettings,
): PayoutRuntime {
  const offerTtlMs = settings.offerTtlDays * 86_400_000;
  return {
    environment,
    offerTtlMs,
    bankFileApprovalLimitCents: settings.bankFileApprovalLimitCents ??
      configDefaults.BANK_FILE_APPROVAL_LIMIT_CENTS,
    micrFont: settings.micrFont ?? null,
    notifications: {
      environment,
      baseUrl: settings.baseUrl,
      linkTtlMs: (settings.portalLinkTtlDays ?? configDefaults.PORTAL_LINK_TTL_DAYS) * 86_400_000,
      resendsPerHourMax: settings.resendsPerHourMax ?? configDefaults.RESEND_PER_HOUR_MAX,
    },
  };
}
