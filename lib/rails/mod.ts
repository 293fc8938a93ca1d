/**
 * Payment rails, the folder's public face. The seam (seam.ts) is what a rail is given and answers;
 * a rail is called once per payout (`PayoutRail`) or takes payouts in batches (`BatchRail`,
 * batch.ts, with its queue, cutoff and transmit jobs). The sandbox's test details (sandbox.ts)
 * decide what the sandbox's bank and providers' simulators do; the unconfigured rail (live.ts)
 * refuses a payout of a method no rail takes. Rails are called by the
 * `payout.submit` and `rail.transmit` jobs (lib/payouts/jobs.ts, lib/rails/batch.ts), outside
 * every write unit.
 */
export * from "./seam.ts";
export {
  sandboxScenario,
  sandboxTestDetails,
  testPayeeMarker,
  testPayeeWallet,
} from "./sandbox.ts";
export { unconfiguredRail } from "./live.ts";
export {
  BATCH_ENTRIES_MAX,
  BATCH_TRANSMIT_LEASE_MS,
  type BatchEntry,
  type BatchRail,
  type EntryOutcome,
  type RailBatch,
  type TransmitAnswer,
} from "./batch.ts";
