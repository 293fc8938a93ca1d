/**
 * Enrollment: how an operator gets credentials nobody else has seen. Creating or resetting an
 * operator issues a one-time code (single use, ENROLLMENT_TTL_MS) that goes to the operator's own
 * e-mail address through the live notification outbox, never to whoever created or reset them;
 * with it the operator sets their own password and gets their own TOTP secret. A dev-mode sandbox
 * has no mail: there the code is given back to whoever asked, since one person plays every role.
 * Changing one's own credentials needs the current password and a TOTP code.
 */
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import { newId, randomBase62, sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { hashPassword, verifyPassword } from "./passwords.ts";
import {
  afterFailedSignIn,
  checkPassword,
  ENROLLMENT_TTL_MS,
  isLocked,
  NOT_ENROLLED,
  totpReplayed,
} from "./rules.ts";
import {
  endSessionsOf,
  findEnrollmentByCodeHash,
  findOperatorById,
  insertEnrollment,
  type OperatorRecord,
  recordSignInFailure,
  recordSignInSuccess,
  setOperatorCredentials,
  setOperatorPassword,
  useEnrollment,
} from "./store.ts";
import { matchTotp, newTotpSecret, totpUri } from "./totp.ts";
import type { OperatorDeps, SignedInOperator } from "./service.ts";

/** `enr_` and 32 base62 characters (about 190 bits). */
const ENROLLMENT_CODE = /^enr_[0-9A-Za-z]{32}$/;
const ENROLLMENT_CODE_LENGTH = 32;

/** Where an enrollment code went: the operator's e-mail, or (dev mode) back to the caller. */
export type EnrollmentDelivery =
  | { readonly enrollment: "emailed"; readonly enrollment_sent_to: string }
  | { readonly enrollment: "shown"; readonly enrollment_code: string };

/**
 * Issues an operator's enrollment code in the caller's unit (earlier unused codes stop working)
 * and queues it to their e-mail address, in the live outbox.
 */
export async function issueEnrollment(
  tx: WriteTx,
  deps: Pick<OperatorDeps, "dev">,
  operator: { id: string; email: string; role: string },
  purpose: "invite" | "reset",
  now: number,
): Promise<EnrollmentDelivery> {
  const code = `enr_${randomBase62(ENROLLMENT_CODE_LENGTH)}`;
  const expiresAt = now + ENROLLMENT_TTL_MS;
  await insertEnrollment(tx, {
    id: newId("enr"),
    operatorId: operator.id,
    codeHash: await sha256Hex(code),
    purpose,
    expiresAt,
  }, now);
  if (deps.dev) return { enrollment: "shown", enrollment_code: code };
  const why = purpose === "invite"
    ? `You were made ${operator.role === "admin" ? "an" : "a"} ${operator.role} operator.`
    : "An admin cleared your operator password and TOTP.";
  await tx.execute({
    sql: `INSERT INTO notifications (id, company_id, payout_id, channel, recipient, subject, body,
            links, code, status, created_at) VALUES (?, NULL, NULL, 'email', ?, ?, ?, '[]', NULL,
            'pending', ?)`,
    args: [
      newId("ntf"),
      operator.email,
      "Your operator enrollment code",
      `${why} Set your own password and TOTP with this code before ${
        new Date(expiresAt).toISOString()
      }: open /console/enroll on the service, or run \`deno task admin enroll\`.\n\n${code}\n\n` +
      "It works once. If you did not expect it, tell your other admins.",
      now,
    ],
  });
  return { enrollment: "emailed", enrollment_sent_to: operator.email };
}

export type EnrollRefusal = "enrollment_invalid" | "enrollment_expired" | "weak_password";

/**
 * Enrols with a code: the operator's own password, and a new TOTP secret shown to them once (to
 * scan; the first sign-in with its code confirms it). The code is used in the same unit, so it
 * works once however many try it at once.
 */
export async function enroll(
  deps: OperatorDeps,
  origin: string,
  input: { code: string; password: string },
  now: number,
): Promise<Result<{ operator: OperatorRecord; totpUri: string }, EnrollRefusal>> {
  const code = input.code.trim();
  const invalid = refuse(
    "enrollment_invalid",
    "the enrollment code is not valid (used, replaced or mistyped): ask an admin for a new one",
    { field: "code" },
  );
  if (!ENROLLMENT_CODE.test(code)) return invalid;
  const live = deps.databases.live;
  const found = await findEnrollmentByCodeHash(live.readClient, await sha256Hex(code));
  if (!found || found.usedAt !== null || found.replacedAt !== null) return invalid;
  if (now >= found.expiresAt) {
    return refuse(
      "enrollment_expired",
      `the enrollment code expired at ${
        new Date(found.expiresAt).toISOString()
      }: ask an admin for a new one`,
      { field: "code" },
    );
  }
  const operator = (await findOperatorById(live.readClient, found.operatorId))!;
  if (operator.disabledAt !== null) return invalid;
  const password = checkPassword(input.password, operator.email);
  if (!password.ok) return password;
  const totpSecret = newTotpSecret();
  const credentials = {
    passwordHash: await hashPassword(input.password),
    totpSecretSealed: await deps.secretBox.sealText(totpSecret),
  };
  const actor = { operator: { id: operator.id, email: operator.email }, origin };
  const enrolled = await live.writer.write(
    async (tx): Promise<Result<OperatorRecord, "enrollment_invalid">> => {
      if (!await useEnrollment(tx, found.id, now)) return tx.abort(invalid);
      await setOperatorCredentials(tx, operator.id, credentials);
      await endSessionsOf(tx, operator.id, now);
      const after = (await findOperatorById(tx, operator.id))!;
      await appendAudit(tx, "live", actor, {
        at: now,
        action: "operator:enroll",
        objectType: "operator",
        objectId: operator.id,
        companyId: null,
        before: { enrollment: found.id, purpose: found.purpose },
        after: { credentials: "own password and TOTP secret", role: after.role },
      });
      return ok(after);
    },
  );
  if (!enrolled.ok) return enrolled;
  return ok({ operator: enrolled.value, totpUri: totpUri(totpSecret, operator.email) });
}

export type OwnCredentialsRefusal =
  | "credentials_wrong"
  | "operator_locked"
  | "totp_required"
  | "totp_replayed"
  | "weak_password";

/**
 * Changes one's own password (and, asked for, the TOTP secret, shown once): only with the current
 * password and a TOTP code (dev mode: no TOTP). A wrong one counts toward the sign-in lockout.
 */
export async function changeOwnCredentials(
  deps: OperatorDeps,
  actor: AuditActor,
  operator: SignedInOperator,
  input: { currentPassword: string; code: string; newPassword: string; newTotp: boolean },
  now: number,
): Promise<Result<{ totpUri: string | null }, OwnCredentialsRefusal>> {
  const live = deps.databases.live;
  const current = (await findOperatorById(live.readClient, operator.id))!;
  if (isLocked(current.lockedUntil, now)) {
    return refuse("operator_locked", `operator ${current.email} is locked after failed attempts`);
  }
  const passwordOk = current.passwordHash !== NOT_ENROLLED &&
    await verifyPassword(input.currentPassword, current.passwordHash);
  const code = input.code.trim();
  let step: number | null = null;
  let wrong = !passwordOk;
  if (!wrong && (code !== "" || !deps.dev)) {
    if (code === "" || current.totpSecretSealed === null) {
      return refuse("totp_required", "a TOTP code is required: enter the code of your app", {
        field: "code",
      });
    }
    step = matchTotp(await deps.secretBox.openText(current.totpSecretSealed), code, now);
    wrong = step === null;
  }
  const fresh = wrong ? null : checkPassword(input.newPassword, current.email);
  if (fresh && !fresh.ok) return fresh;
  const passwordHash = wrong ? null : await hashPassword(input.newPassword);
  const totpSecret = input.newTotp && !wrong ? newTotpSecret() : null;
  const totpSecretSealed = totpSecret === null ? null : await deps.secretBox.sealText(totpSecret);
  return await live.writer.write(async (tx) => {
    const inUnit = (await findOperatorById(tx, operator.id))!;
    if (!wrong && step !== null && totpReplayed(step, inUnit.totpLastStep)) {
      return refuse(
        "totp_replayed",
        "this TOTP code was used already: wait for the next code of your app",
        { field: "code" },
      );
    }
    if (wrong || passwordHash === null) {
      // The count must commit, so the refusal is returned, not aborted.
      const counters = afterFailedSignIn(inUnit.failedAttempts, now);
      await recordSignInFailure(tx, inUnit.id, counters);
      await appendAudit(tx, "live", actor, {
        at: now,
        action: "operator:password:failed",
        objectType: "operator",
        objectId: inUnit.id,
        companyId: null,
        before: { failed_attempts: inUnit.failedAttempts },
        after: { failed_attempts: counters.failedAttempts },
      });
      return refuse(
        "credentials_wrong",
        "the current password or TOTP code is wrong",
        { field: "password" },
      );
    }
    await recordSignInSuccess(tx, inUnit.id, step);
    if (totpSecretSealed === null) await setOperatorPassword(tx, inUnit.id, passwordHash);
    else await setOperatorCredentials(tx, inUnit.id, { passwordHash, totpSecretSealed });
    await appendAudit(tx, "live", actor, {
      at: now,
      action: "operator:password",
      objectType: "operator",
      objectId: inUnit.id,
      companyId: null,
      before: null,
      after: { credentials: totpSecret === null ? "new password" : "new password and TOTP secret" },
    });
    return ok({ totpUri: totpSecret === null ? null : totpUri(totpSecret, inUnit.email) });
  });
}
