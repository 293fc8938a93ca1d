/** The job handlers of each environment: sandbox rails in test, live rails (unconfigured) in live. */
import type { Environment } from "../lib/config.ts";
import { sandboxRail, unconfiguredLiveRail } from "../lib/rails/mod.ts";
import { payoutJobHandlers, type PayoutRuntime } from "./payout_jobs.ts";
import type { JobHandlers } from "./scheduler.ts";

export function jobHandlersByEnvironment(
  settings: { offerTtlDays: number; baseUrl: string },
): Record<Environment, JobHandlers> {
  return {
    test: payoutJobHandlers(payoutRuntime("test", settings)),
    live: payoutJobHandlers(payoutRuntime("live", settings)),
  };
}

/** What payout moves need to know of their environment: its rail, offer lifetime and links. */
export function payoutRuntime(
  environment: Environment,
  settings: { offerTtlDays: number; baseUrl: string },
): PayoutRuntime {
  const offerTtlMs = settings.offerTtlDays * 86_400_000;
  return {
    environment,
    rail: environment === "test" ? sandboxRail : unconfiguredLiveRail,
    offerTtlMs,
    notifications: { environment, baseUrl: settings.baseUrl, linkTtlMs: offerTtlMs },
  };
}
