/** The live rail until a provider is configured: it refuses every payout, and nothing pretends to pay. */
import type { PayoutRail } from "./seam.ts";

export const unconfiguredLiveRail: PayoutRail = {
  shape: "per_payout",
  submit: (submission) =>
    Promise.resolve({
      kind: "refused",
      reason: "rail_not_configured",
      message:
        `no live ${submission.modality} rail is configured; payout ${submission.payoutId} was not sent`,
    }),
};
