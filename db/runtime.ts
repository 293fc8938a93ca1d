/** The job handlers of each environment: sandbox rails in test, live rails (unconfigured) in live. */
import type { Environment } from "../lib/config.ts";
import { sandboxRail, unconfiguredLiveRail } from "../lib/rails/mod.ts";
import { payoutJobHandlers } from "./payout_jobs.ts";
import type { JobHandlers } from "./scheduler.ts";

export function jobHandlersByEnvironment(): Record<Environment, JobHandlers> {
  return {
    test: payoutJobHandlers({ environment: "test", rail: sandboxRail }),
    live: payoutJobHandlers({ environment: "live", rail: unconfiguredLiveRail }),
  };
}
