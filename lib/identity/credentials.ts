/** Whether a stored credential may be used now: rotation leaves the old key a grace period. */
export type KeyState = "active" | "expired" | "revoked";

export interface KeyValidity {
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
}

/** A rotated key works until `expiresAt` (exclusive); a revoked key stops at once. */
export function keyState(key: KeyValidity, now: number): KeyState {
  if (key.revokedAt !== null && key.revokedAt <= now) return "revoked";
  if (key.expiresAt !== null && now >= key.expiresAt) return "expired";
  return "active";
}
