/**
 * TOTP (RFC 6238) through otpauth: 30-second steps, 6 digits, SHA-1, one step of drift either way.
 * Which step a code matched is returned, so the caller can refuse a replay of it.
 */
import * as OTPAuth from "otpauth";
import { TOTP_DIGITS, TOTP_PERIOD_SECONDS, TOTP_WINDOW_STEPS, totpStepAt } from "./rules.ts";

/** The issuer shown in authenticator apps. */
const TOTP_ISSUER = "Disbursements";
/** 160 bits, the RFC 4226 recommendation for SHA-1. */
const TOTP_SECRET_BYTES = 20;

function totpOf(secret: string, email: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({
    issuer: TOTP_ISSUER,
    label: email,
    secret: OTPAuth.Secret.fromBase32(secret),
    algorithm: "SHA1",
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  });
}

/** A new base32 TOTP secret. */
export function newTotpSecret(): string {
  return new OTPAuth.Secret({ size: TOTP_SECRET_BYTES }).base32;
}

/** The otpauth:// URI an authenticator app scans or imports. */
export function totpUri(secret: string, email: string): string {
  return totpOf(secret, email).toString();
}

/** The code of a moment (for tests and the seeded sandbox, which has no phone). */
export function totpCodeAt(secret: string, now: number): string {
  return totpOf(secret, "").generate({ timestamp: now });
}

/** The time step a code matches at `now`, within the window, or null when it matches none. */
export function matchTotp(secret: string, code: string, now: number): number | null {
  if (!new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(code)) return null;
  const delta = totpOf(secret, "").validate({
    token: code,
    timestamp: now,
    window: TOTP_WINDOW_STEPS,
  });
  // validate() answers 0 for a code of the current step: compare with null, never truthiness.
  return delta === null ? null : totpStepAt(now) + delta;
}
