/**
 * The console's first sign-in (issue 20): an operator whose TOTP secret has never been used is
 * shown it, as a QR code and as text, once their password has been checked, to enroll an app.
 */
import { findOperatorByEmail } from "../operators/store.ts";
import type { OperatorDeps } from "../operators/service.ts";
import { totpUri } from "../operators/totp.ts";

/** A TOTP secret still to be enrolled: the base32 text and the otpauth:// URI an app scans. */
export interface TotpEnrollment {
  readonly secret: string;
  readonly uri: string;
}

/**
 * The TOTP secret of an operator who has never signed in with a code, or null once one was
 * accepted (the secret is then never shown again). Call only after the password was verified.
 */
export async function pendingTotpEnrollment(
  deps: OperatorDeps,
  email: string,
): Promise<TotpEnrollment | null> {
  const operator = await findOperatorByEmail(deps.databases.live.readClient, email.trim());
  if (!operator || operator.totpSecretSealed === null || operator.totpLastStep !== null) {
    return null;
  }
  const secret = await deps.secretBox.openText(operator.totpSecretSealed);
  return { secret, uri: totpUri(secret, operator.email) };
}
