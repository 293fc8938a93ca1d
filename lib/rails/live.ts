/** The rail of a method no other rail takes: it refuses every payout, and nothing pretends to pay. */
import type { PayoutRail } from "./seam.ts";

export const unconfiguredRail: PayoutRail = {
  shape: "per_payout",
  submit: (submission) =>
    Promise.resolve({
      kind: "refused",
      reason: "rail_not_configured",
      message:
        `no ${submission.modality} rail is configured; payout ${submission.payoutId} was not sent`,
    }),
};
