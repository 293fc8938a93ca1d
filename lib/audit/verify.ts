/** Walks one database's audit chain from its first row and names the first row that breaks it. */
import type { Client } from "@libsql/client";
import { type ChainBreak, type ChainPosition, checkChainEnd, checkChainLink } from "./rules.ts";
import { auditRowsAfter } from "./store.ts";

/** Rows read per query while walking the chain. */
export const AUDIT_VERIFY_PAGE_ROWS = 1000;

export interface ChainReport {
  /** Rows checked, up to and including the first bad one. */
  readonly rows: number;
  /** The first bad row, or null when every row holds. */
  readonly broken: ChainBreak | null;
}

/**
 * Checks every row of the chain in order; stops at the first bad one. A chain that ends on rows
 * chained without the key is broken at its last row.
 */
export async function verifyAuditChain(
  client: Client,
  chainKey: Uint8Array,
): Promise<ChainReport> {
  let previous: ChainPosition | null = null;
  let checked = 0;
  for (;;) {
    const page = await auditRowsAfter(client, previous?.seq ?? 0, AUDIT_VERIFY_PAGE_ROWS);
    for (const row of page) {
      checked++;
      const step = checkChainLink(row, previous, chainKey);
      if (step.broken) return { rows: checked, broken: step.broken };
      previous = step.position;
    }
    if (page.length < AUDIT_VERIFY_PAGE_ROWS) {
      return { rows: checked, broken: checkChainEnd(previous) };
    }
  }
}
