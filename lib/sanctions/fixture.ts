/**
 * The test environment's sanctions list: a few obviously fictional names, bundled, so the sandbox
 * screens every payout as live does without an OFAC download. A sandbox payee named like one of
 * them is held `in_review`.
 */
import { sanctionsEntries, type SanctionsEntry } from "./rules.ts";

/** The fixture's list id, as sanctions_reviews.list_id names it. */
export const FIXTURE_LIST_ID = "sandbox_fixture_v1";

export const fixtureSanctionsEntries: readonly SanctionsEntry[] = sanctionsEntries([
  { entryNumber: 900001, name: "SANKTIONOV, Ivan", sdnType: "individual", program: "SANDBOX" },
  { entryNumber: 900002, name: "BLOCKED TRADING COMPANY", sdnType: "", program: "SANDBOX" },
  { entryNumber: 900003, name: "EMBARGO, Erika Maria", sdnType: "individual", program: "SANDBOX" },
  { entryNumber: 900004, name: "DENIED SHIPPING LTD.", sdnType: "", program: "SANDBOX" },
]);
