/**
 * The keys every audit row is chained with in this process, set once at the composition root
 * (the service's start, the CLI): appending or verifying before that is a programmer error. Apart
 * from lib/audit/anchor.ts, which makes the keys with Node's crypto, so that the audit log's store
 * loads no Node module with the service's API.
 */
import type { AuditKeys } from "./anchor.ts";

let processKeys: AuditKeys | null = null;
let coming: Promise<unknown> | null = null;

export function useAuditKeys(keys: AuditKeys): void {
  processKeys = keys;
}

export function currentAuditKeys(): AuditKeys {
  if (processKeys === null) {
    throw new Error("the audit keys are not set: the composition root sets them (useAuditKeys)");
  }
  return processKeys;
}

/**
 * Said by a composition root that makes the keys after it starts answering (the service, after
 * its first API answer): an append before then waits for them instead of failing.
 */
export function auditKeysComing(made: Promise<unknown>): void {
  coming = made;
}

/** The keys, once those on their way (auditKeysComing) are made. */
export async function auditKeysInUse(): Promise<AuditKeys> {
  if (processKeys === null && coming !== null) await coming;
  return currentAuditKeys();
}
