/** The job handlers of each environment: sandbox rails in test, live rails (unconfigured) in live. */
import { type Config, configDefaults, type Environment } from "../platform/config.ts";
import { sandboxRail, unconfiguredLiveRail } from "../rails/mod.ts";
import { payoutJobHandlers, type PayoutRuntime } from "./jobs.ts";
import type { JobHandlers } from "../../db/scheduler.ts";

export interface RuntimeSettings {
  readonly offerTtlDays: number;
  readonly baseUrl: string;
  /** DESIGN 14: portal links expire after this many days (default 30). */
  readonly portalLinkTtlDays?: number;
}

/** The runtime settings a configuration gives. */
export function runtimeSettingsOf(config: Config): RuntimeSettings {
  return {
    offerTtlDays: config.limits.OFFER_TTL_DAYS,
    portalLinkTtlDays: config.limits.PORTAL_LINK_TTL_DAYS,
    baseUrl: config.baseUrl,
  };
}

export function jobHandlersByEnvironment(
  settings: RuntimeSettings,
): Record<Environment, JobHandlers> {
  return {
    test: payoutJobHandlers(payoutRuntime("test", settings)),
    live: payoutJobHandlers(payoutRuntime("live", settings)),
  };
}

/** What payout moves need to know of their environment: its rail, offer lifetime and links. */
export function payoutRuntime(
  environment: Environment,
  settings: RuntimeSettings,
): PayoutRuntime {
  const offerTtlMs = settings.offerTtlDays * 86_400_000;
  return {
    environment,
    rail: environment === "test" ? sandboxRail : unconfiguredLiveRail,
    offerTtlMs,
    notifications: {
      environment,
      baseUrl: settings.baseUrl,
      linkTtlMs: (settings.portalLinkTtlDays ?? configDefaults.PORTAL_LINK_TTL_DAYS) * 86_400_000,
    },
  };
}
