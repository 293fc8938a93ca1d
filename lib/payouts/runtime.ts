/**
 * The job handlers of each environment: sandbox rails in test, live rails (unconfigured) in live,
 * and the operator's document checks.
 */
import { type Config, configDefaults, type Environment } from "../platform/config.ts";
import { type RailDirectory, railDirectory } from "../rails/seam.ts";
import { sandboxRail } from "../rails/sandbox.ts";
import { unconfiguredLiveRail } from "../rails/live.ts";
import { payoutJobHandlers, type PayoutRuntime } from "./jobs.ts";
import { documentJobHandlers } from "../documents/jobs.ts";
import type { Database } from "../../db/client.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { JobHandlers } from "../../db/scheduler.ts";

export interface RuntimeSettings {
  readonly offerTtlDays: number;
  readonly baseUrl: string;
  /** DESIGN 14: portal links expire after this many days (default 30). */
  readonly portalLinkTtlDays?: number;
  /** DESIGN 11: resends a payee may get in any hour (default 5). */
  readonly resendsPerHourMax?: number;
}

/** The runtime settings a configuration gives. */
export function runtimeSettingsOf(config: Config): RuntimeSettings {
  return {
    offerTtlDays: config.limits.OFFER_TTL_DAYS,
    portalLinkTtlDays: config.limits.PORTAL_LINK_TTL_DAYS,
    resendsPerHourMax: config.limits.RESEND_PER_HOUR_MAX,
    baseUrl: config.baseUrl,
  };
}

/**
 * The rails of an environment: the sandbox rail keeps its submissions in the test database; live
 * has no rail configured yet, so every live payout is refused with `rail_not_configured`.
 */
export function railsOf(environment: Environment, database: Database): RailDirectory {
  return railDirectory(environment === "test" ? sandboxRail(database) : unconfiguredLiveRail);
}

/** The job handlers of an environment's database, on its rails. */
export function jobHandlersOf(
  environment: Environment,
  settings: RuntimeSettings,
  database: Database,
  _secretBox: SecretBox,
): JobHandlers {
  return {
    ...payoutJobHandlers(payoutRuntime(environment, settings), railsOf(environment, database)),
    ...documentJobHandlers(),
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
    notifications: {
      environment,
      baseUrl: settings.baseUrl,
      linkTtlMs: (settings.portalLinkTtlDays ?? configDefaults.PORTAL_LINK_TTL_DAYS) * 86_400_000,
      resendsPerHourMax: settings.resendsPerHourMax ?? configDefaults.RESEND_PER_HOUR_MAX,
    },
  };
}
