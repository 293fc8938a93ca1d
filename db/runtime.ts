/** The job handlers of each environment: sandbox rails in test, live rails (unconfigured) in live. */
import type { Environment } from "../lib/config.ts";
import { sandboxRail, unconfiguredLiveRail } from "../lib/rails/mod.ts";
import { payoutJobHandlers } from "./payout_jobs.ts";
import type { JobHandlers } from "./scheduler.ts";

export function jobHandlersByEnvironment(offerTtlDays: number): Record<Environment, JobHandlers> {
  const offerTtlMs = offerTtlDays * 86_400_000;
  return {
    test: payoutJobHandlers({ environment: "test", rail: sandboxRail, offerTtlMs }),
    live: payoutJobHandlers({ environment: "live", rail: unconfiguredLiveRail, offerTtlMs }),
  };
}
