/**
 * Operator use cases: the first admin, creating, disabling, resetting and listing operators,
 * signing in and out, and reading a session. Operators and sessions live in the live database;
 * every change writes its audit row in the same unit. Password hashing (slow on purpose) runs
 * before the unit, never inside it.
 */
import * as v from "valibot";
import type { Database } from "../../db/client.ts";
import { appendAudit, type AuditActor, type AuditEntry } from "../audit/store.ts";
import { emailSchema } from "../identity/rules.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { RuntimeSettings } from "../payouts/settings.ts";
import { newId, randomBase62, sha256Hex } from "../platform/keys.ts";
import { ok, type Refusal, refuse, type Result } from "../platform/result.ts";
import { decoyHash, hashPassword, verifyPassword } from "./passwords.ts";
import {
  afterFailedSignIn,
  checkPassword,
  extendedExpiry,
  isLocked,
  isRole,
  newSessionTimes,
  NOT_ENROLLED,
  type Role,
  ROLES,
  sessionState,
  totpReplayed,
} from "./rules.ts";
import {
  countActiveAdmins,
  countActiveFullAdmins,
  countOperators,
  endSession,
  endSessionsOf,
  extendSession,
  findOperatorByEmail,
  findOperatorById,
  findSessionByTokenHash,
  insertOperator,
  insertSession,
  listOperatorRecords,
  type NewOperator,
  type OperatorRecord,
  recordSignInFailure,
  recordSignInSuccess,
  setOperatorCredentials,
  setOperatorDisabled,
  setOperatorRole,
} from "./store.ts";
import { type EnrollmentDelivery, issueEnrollment } from "./enrollment.ts";
import { matchTotp, newTotpSecret, totpUri } from "./totp.ts";

export type { OperatorRecord };

/** What the operator use cases need: both databases (operators are in live) and the sealer. */
export interface OperatorDeps {
  readonly databases: Readonly<Record<Environment, Database>>;
  readonly secretBox: SecretBox;
  /** Dev mode (`deno task dev`): there is no TOTP. */
  readonly dev: boolean;
  /** The payout settings an approved action that moves payouts runs with (a staged import). */
  readonly runtimeSettings?: RuntimeSettings;
}

/** An operator acting through a valid session. */
export interface SignedInOperator {
  readonly sessionId: string;
  readonly id: string;
  readonly email: string;
  readonly role: Role;
  /** Company ids the operator is limited to; null: every company. */
  readonly companyScope: readonly string[] | null;
  readonly totpVerified: boolean;
  readonly sessionExpiresAt: number;
  readonly sessionAbsoluteExpiresAt: number;
}

/** A session token: `ops_` and 256 random bits, stored only as its SHA-256. */
const SESSION_TOKEN_LENGTH = 43;
/** A generated password: 24 base62 characters, about 143 bits. */
const GENERATED_PASSWORD_LENGTH = 24;

/** The audit actor of a signed-in operator. */
export function actorOf(operator: SignedInOperator | null, origin: string): AuditActor {
  return { operator: operator ? { id: operator.id, email: operator.email } : null, origin };
}

/** An operator as listings and audit rows show it: never a hash or a secret. */
export function operatorView(operator: OperatorRecord, now: number) {
  return {
    id: operator.id,
    email: operator.email,
    role: operator.role,
    companies: operator.companyScope,
    totp_enrolled: operator.totpSecretSealed !== null,
    locked_until: isLocked(operator.lockedUntil, now)
      ? new Date(operator.lockedUntil!).toISOString()
      : null,
    disabled_at: operator.disabledAt === null ? null : new Date(operator.disabledAt).toISOString(),
    created_at: new Date(operator.createdAt).toISOString(),
  };
}

function validEmail(email: unknown): Result<string, "invalid_input"> {
  const parsed = v.safeParse(emailSchema, email);
  if (!parsed.success) {
    return refuse("invalid_input", `email ${JSON.stringify(email)}: ${parsed.issues[0].message}`, {
      field: "email",
    });
  }
  return ok(parsed.output.toLowerCase());
}

/** The password given, checked against the policy, or a generated one when none was given. */
function chosenPassword(
  password: string | undefined,
  email: string,
): Result<{ password: string; generated: boolean }, "weak_password"> {
  if (password === undefined || password === "") {
    return ok({ password: randomBase62(GENERATED_PASSWORD_LENGTH), generated: true });
  }
  const checked = checkPassword(password, email);
  return checked.ok ? ok({ password, generated: false }) : checked;
}

/** Company ids from a comma-separated list of ids or TINs; each must exist. */
export async function resolveCompanies(
  database: Database,
  list: string,
): Promise<Result<string[], "company_not_found" | "invalid_input">> {
  const names = list.split(",").map((name) => name.trim()).filter((name) => name !== "");
  if (names.length === 0) {
    return refuse(
      "invalid_input",
      "--companies names no company: give ids or TINs, comma-separated",
      {
        field: "companies",
      },
    );
  }
  const ids: string[] = [];
  for (const name of names) {
    const { rows } = await database.readClient.execute({
      sql: "SELECT id FROM companies WHERE id = ? OR tin = ?",
      args: [name, name],
    });
    if (!rows[0]) {
      return refuse("company_not_found", `no company ${name}`, { field: "companies" });
    }
    if (!ids.includes(String(rows[0].id))) ids.push(String(rows[0].id));
  }
  return ok(ids);
}

/** What a new operator's creator is shown once: the password when generated, and the TOTP URI. */
export interface NewCredentials {
  readonly password?: string;
  readonly totp_uri: string;
}

/** The new operator's row and the secrets to show once, prepared before any write unit. */
export async function prepareOperator(
  deps: OperatorDeps,
  input: {
    email: string;
    role: Role;
    companyScope: readonly string[] | null;
    password: string | undefined;
    createdBy: string | null;
  },
): Promise<Result<{ row: NewOperator; shown: NewCredentials }, "weak_password">> {
  const password = chosenPassword(input.password, input.email);
  if (!password.ok) return password;
  const totpSecret = newTotpSecret();
  return ok({
    row: {
      id: newId("op"),
      email: input.email,
      role: input.role,
      companyScope: input.companyScope,
      passwordHash: await hashPassword(password.value.password),
      totpSecretSealed: await deps.secretBox.sealText(totpSecret),
      createdBy: input.createdBy,
    },
    shown: {
      ...(password.value.generated ? { password: password.value.password } : {}),
      totp_uri: totpUri(totpSecret, input.email),
    },
  });
}

/** Inserts a prepared operator and its audit row, in the caller's unit (refused if the e-mail is taken). */
export async function insertOperatorAudited(
  tx: Parameters<Parameters<Database["writer"]["write"]>[0]>[0],
  actor: AuditActor,
  row: NewOperator,
  now: number,
  note: Record<string, unknown> = {},
): Promise<Result<OperatorRecord, "duplicate_email">> {
  if (await findOperatorByEmail(tx, row.email)) {
    return refuse("duplicate_email", `an operator with e-mail ${row.email} already exists`, {
      field: "email",
    });
  }
  await insertOperator(tx, row, now);
  const created = (await findOperatorById(tx, row.id))!;
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "operator:create",
    objectType: "operator",
    objectId: created.id,
    companyId: null,
    before: null,
    after: { ...operatorView(created, now), ...note },
  });
  return ok(created);
}

/**
 * The one-time bootstrap: the first admin, only while no operator exists (checked in the unit, so
 * two bootstraps at once make one admin).
 */
export async function createFirstAdmin(
  deps: OperatorDeps,
  origin: string,
  input: { email: unknown; password: string | undefined },
  now: number,
): Promise<
  Result<
    { operator: OperatorRecord; shown: NewCredentials },
    "invalid_input" | "weak_password" | "operators_exist" | "duplicate_email"
  >
> {
  const email = validEmail(input.email);
  if (!email.ok) return email;
  if (await countOperators(deps.databases.live.readClient) > 0) return operatorsExist();
  const prepared = await prepareOperator(deps, {
    email: email.value,
    role: "admin",
    companyScope: null,
    password: input.password,
    createdBy: null,
  });
  if (!prepared.ok) return prepared;
  const created = await deps.databases.live.writer.write(
    async (tx): Promise<Result<OperatorRecord, "operators_exist" | "duplicate_email">> => {
      if (await countOperators(tx) > 0) return tx.abort(operatorsExist());
      const inserted = await insertOperatorAudited(
        tx,
        { operator: null, origin },
        prepared.value.row,
        now,
      );
      return inserted.ok ? inserted : tx.abort(inserted);
    },
  );
  return created.ok ? ok({ operator: created.value, shown: prepared.value.shown }) : created;
}

function operatorsExist() {
  return refuse(
    "operators_exist",
    "operators exist already: --first creates the first admin only; sign in and run operator:create",
  );
}

/** A sandbox operator as the credentials file shows it. */
export interface SandboxOperator {
  readonly email: string;
  readonly password: string;
  readonly role: Role;
}

/**
 * The sandbox's operators (dev mode): each of `wanted` whose e-mail is free, without TOTP (dev mode
 * has none), with a generated password the credentials file shows. Returns the ones created.
 */
export async function seedSandboxOperators(
  databases: OperatorDeps["databases"],
  wanted: readonly { email: string; role: Role }[],
  now: number,
): Promise<SandboxOperator[]> {
  const prepared: { row: NewOperator; shown: SandboxOperator }[] = [];
  for (const { email, role } of wanted) {
    if (await findOperatorByEmail(databases.live.readClient, email)) continue;
    const password = randomBase62(GENERATED_PASSWORD_LENGTH);
    prepared.push({
      row: {
        id: newId("op"),
        email,
        role,
        companyScope: null,
        passwordHash: await hashPassword(password),
        totpSecretSealed: null,
        createdBy: null,
      },
      shown: { email, password, role },
    });
  }
  return await databases.live.writer.write(async (tx) => {
    const created: SandboxOperator[] = [];
    for (const { row, shown } of prepared) {
      const inserted = await insertOperatorAudited(
        tx,
        { operator: null, origin: "sandbox seed" },
        row,
        now,
      );
      if (inserted.ok) created.push(shown);
    }
    return created;
  });
}

/**
 * A new operator, without credentials: they enrol with the code sent to them. A viewer or clerk
 * is created at once; an admin only while the creator is the one active admin (a new
 * installation's second admin, audited as such); any other new admin waits for a second admin
 * (an approval of kind operator.create_admin).
 */
export async function createOperator(
  deps: OperatorDeps,
  actor: AuditActor,
  input: { email: unknown; role: unknown; companies: string | undefined },
  now: number,
): Promise<
  Result<
    { operator: OperatorRecord; delivery: EnrollmentDelivery },
    "invalid_input" | "duplicate_email" | "company_not_found" | "approval_required"
  >
> {
  const checked = await checkNewOperator(deps, input);
  if (!checked.ok) return checked;
  return await deps.databases.live.writer.write(
    async (tx): Promise<
      Result<
        { operator: OperatorRecord; delivery: EnrollmentDelivery },
        "duplicate_email" | "approval_required"
      >
    > => {
      const secondAdmin = checked.value.role === "admin" && await countActiveAdmins(tx) === 1;
      if (checked.value.role === "admin" && !secondAdmin) {
        return tx.abort(
          refuse("approval_required", "a new admin waits for a second admin's approval"),
        );
      }
      const inserted = await insertOperatorAudited(
        tx,
        actor,
        {
          id: newId("op"),
          ...checked.value,
          passwordHash: NOT_ENROLLED,
          totpSecretSealed: null,
          createdBy: actor.operator?.id ?? null,
        },
        now,
        secondAdmin ? { second_admin: "invited by the only admin, without approval" } : {},
      );
      if (!inserted.ok) return tx.abort(inserted);
      const delivery = await issueEnrollment(tx, deps, inserted.value, "invite", now);
      return ok({ operator: inserted.value, delivery });
    },
  );
}

/** The e-mail, role and scope of a new operator, checked (the e-mail must be free). */
export async function checkNewOperator(
  deps: OperatorDeps,
  input: { email: unknown; role: unknown; companies: string | undefined },
): Promise<
  Result<
    { email: string; role: Role; companyScope: string[] | null },
    "invalid_input" | "duplicate_email" | "company_not_found"
  >
> {
  const email = validEmail(input.email);
  if (!email.ok) return email;
  if (typeof input.role !== "string" || !isRole(input.role)) {
    return refuse(
      "invalid_input",
      `--role ${JSON.stringify(input.role ?? null)}: one of ${ROLES.join(", ")}`,
      { field: "role" },
    );
  }
  let companyScope: string[] | null = null;
  if (input.companies !== undefined) {
    const resolved = await resolveCompanies(deps.databases.live, input.companies);
    if (!resolved.ok) return resolved;
    companyScope = resolved.value;
  }
  if (await findOperatorByEmail(deps.databases.live.readClient, email.value)) {
    return refuse("duplicate_email", `an operator with e-mail ${email.value} already exists`, {
      field: "email",
    });
  }
  return ok({ email: email.value, role: input.role, companyScope });
}

export type SignInRefusal =
  | "invalid_input"
  | "sign_in_failed"
  | "operator_locked"
  | "operator_disabled"
  | "totp_required"
  | "totp_replayed"
  | "totp_not_enrolled";

const WRONG_CREDENTIALS = "the e-mail, password or TOTP code is wrong";

/**
 * Signs an operator in with e-mail, password and TOTP code (outside dev mode the code is
 * required). A wrong password or code counts toward the lockout, and that count commits; a code
 * already used (its step or an earlier one) is refused as a replay and counts too.
 */
export async function signIn(
  deps: OperatorDeps,
  origin: string,
  input: { email: string; password: string; code: string },
  now: number,
): Promise<
  Result<
    { token: string; operator: OperatorRecord; totpVerified: boolean; expiresAt: number },
    SignInRefusal
  >
> {
  const email = validEmail(input.email);
  if (!email.ok) return email;
  const live = deps.databases.live;
  const found = await findOperatorByEmail(live.readClient, email.value);
  if (!found) {
    // The same work as for a known operator, so timing does not tell which e-mails exist.
    await verifyPassword(input.password, await decoyHash());
    return refuse("sign_in_failed", WRONG_CREDENTIALS);
  }
  if (found.disabledAt !== null) {
    return refuse("operator_disabled", `operator ${found.email} is disabled`);
  }
  if (isLocked(found.lockedUntil, now)) return lockedRefusal(found.email, found.lockedUntil!);
  // An operator who has not enrolled has no password: the decoy takes the same time.
  const passwordOk = await verifyPassword(
    input.password,
    found.passwordHash === NOT_ENROLLED ? await decoyHash() : found.passwordHash,
  ) && found.passwordHash !== NOT_ENROLLED;
  const code = input.code.trim();
  let step: number | null = null;
  let failure: Refusal<SignInRefusal> | null = passwordOk
    ? null
    : refuse("sign_in_failed", WRONG_CREDENTIALS);
  if (!failure && (code !== "" || !deps.dev)) {
    if (found.totpSecretSealed === null) {
      failure = refuse(
        "totp_not_enrolled",
        `operator ${found.email} has no TOTP secret: enrol with the code an admin's operator:reset sends`,
      );
    } else if (code === "") {
      failure = refuse("totp_required", "a TOTP code is required: enter the code of your app");
    } else {
      step = matchTotp(await deps.secretBox.openText(found.totpSecretSealed), code, now);
      if (step === null) failure = refuse("sign_in_failed", WRONG_CREDENTIALS);
    }
  }
  const token = `ops_${randomBase62(SESSION_TOKEN_LENGTH)}`;
  const tokenHash = await sha256Hex(token);
  const times = newSessionTimes(now);
  const actor = { operator: { id: found.id, email: found.email }, origin };
  let recorded: AuditEntry | null = null;
  const result = await live.writer.write(async (tx) => {
    const current = (await findOperatorById(tx, found.id))!;
    if (isLocked(current.lockedUntil, now)) {
      return lockedRefusal(current.email, current.lockedUntil!);
    }
    // Checked in the unit: of two sign-ins with one code, the second sees the first's step.
    if (!failure && step !== null && totpReplayed(step, current.totpLastStep)) {
      failure = refuse(
        "totp_replayed",
        "this TOTP code was used already: wait for the next code of your app",
      );
    }
    if (failure) {
      // Missing a code is not a guess at one; every other failure counts toward the lock.
      const counts = failure.code !== "totp_required" && failure.code !== "totp_not_enrolled";
      const counters = counts
        ? afterFailedSignIn(current.failedAttempts, now)
        : { failedAttempts: current.failedAttempts, lockedUntil: current.lockedUntil };
      if (counts) await recordSignInFailure(tx, current.id, counters);
      recorded = {
        at: now,
        action: "login:failed",
        objectType: "operator",
        objectId: current.id,
        companyId: null,
        before: { failed_attempts: current.failedAttempts },
        after: {
          reason: failure.code,
          failed_attempts: counters.failedAttempts,
          locked_until: counters.lockedUntil === null
            ? null
            : new Date(counters.lockedUntil).toISOString(),
        },
      };
      await appendAudit(tx, "live", actor, recorded);
      // The counts must commit, so the refusal is returned, not aborted.
      return counters.lockedUntil !== null && counts
        ? lockedRefusal(current.email, counters.lockedUntil)
        : failure;
    }
    await recordSignInSuccess(tx, current.id, step);
    const sessionId = newId("ses");
    await insertSession(tx, {
      id: sessionId,
      tokenHash,
      operatorId: current.id,
      totpVerified: step !== null,
      ...times,
    }, now);
    recorded = {
      at: now,
      action: "login",
      objectType: "operator_session",
      objectId: sessionId,
      companyId: null,
      before: null,
      after: {
        operator: current.email,
        totp_verified: step !== null,
        expires_at: new Date(times.expiresAt).toISOString(),
      },
    };
    await appendAudit(tx, "live", actor, recorded);
    return ok({
      token,
      operator: current,
      totpVerified: step !== null,
      expiresAt: times.expiresAt,
    });
  });
  // A session works in both environments, so the test log records its sign-in too (its own
  // unit: the live row is the one committed with the session and the lockout counts).
  const copy = recorded;
  if (copy !== null) {
    await deps.databases.test.writer.write((tx) => appendAudit(tx, "test", actor, copy));
  }
  return result;
}

function lockedRefusal(email: string, lockedUntil: number) {
  return refuse(
    "operator_locked",
    `operator ${email} is locked after too many failed sign-ins until ${
      new Date(lockedUntil).toISOString()
    }`,
  );
}

export type SessionRefusal = "session_invalid" | "session_expired" | "operator_disabled";

/** The operator of a session token, when the session is open and unexpired. Reads only. */
export async function readSession(
  deps: OperatorDeps,
  token: string,
  now: number,
): Promise<Result<SignedInOperator, SessionRefusal>> {
  const live = deps.databases.live.readClient;
  const session = /^ops_[0-9A-Za-z]{43}$/.test(token)
    ? await findSessionByTokenHash(live, await sha256Hex(token))
    : null;
  if (!session) {
    return refuse("session_invalid", "the operator session is not valid: sign in with `login`");
  }
  const state = sessionState(session, now);
  if (state !== "active") {
    return refuse(
      state === "ended" ? "session_invalid" : "session_expired",
      state === "ended"
        ? "the operator session was ended: sign in with `login`"
        : "the operator session expired: sign in again with `login`",
    );
  }
  const operator = (await findOperatorById(live, session.operatorId))!;
  if (operator.disabledAt !== null) {
    return refuse("operator_disabled", `operator ${operator.email} is disabled`);
  }
  return ok({
    sessionId: session.id,
    id: operator.id,
    email: operator.email,
    role: operator.role,
    companyScope: operator.companyScope,
    totpVerified: session.totpVerified,
    sessionExpiresAt: session.expiresAt,
    sessionAbsoluteExpiresAt: session.absoluteExpiresAt,
  });
}

/** A use of the session: its idle expiry moves forward (within its absolute limit). */
export async function touchSession(
  deps: OperatorDeps,
  operator: SignedInOperator,
  now: number,
): Promise<void> {
  const expiresAt = extendedExpiry({
    expiresAt: operator.sessionExpiresAt,
    absoluteExpiresAt: operator.sessionAbsoluteExpiresAt,
    endedAt: null,
  }, now);
  if (expiresAt > operator.sessionExpiresAt) {
    await deps.databases.live.writer.write((tx) =>
      extendSession(tx, operator.sessionId, expiresAt)
    );
  }
}

/** Ends the session of a token; an unknown or ended one has nothing to end. */
export async function signOut(
  deps: OperatorDeps,
  origin: string,
  token: string,
  now: number,
): Promise<{ ended: boolean }> {
  const live = deps.databases.live;
  const session = /^ops_[0-9A-Za-z]{43}$/.test(token)
    ? await findSessionByTokenHash(live.readClient, await sha256Hex(token))
    : null;
  if (!session || session.endedAt !== null) return { ended: false };
  const operator = (await findOperatorById(live.readClient, session.operatorId))!;
  await live.writer.write(async (tx) => {
    await endSession(tx, session.id, now);
    await appendAudit(
      tx,
      "live",
      { operator: { id: operator.id, email: operator.email }, origin },
      {
        at: now,
        action: "logout",
        objectType: "operator_session",
        objectId: session.id,
        companyId: null,
        before: { ended_at: null },
        after: { ended_at: new Date(now).toISOString() },
      },
    );
  });
  return { ended: true };
}

type TargetRefusal = "invalid_input" | "operator_not_found";

async function targetOperator(
  deps: OperatorDeps,
  email: unknown,
): Promise<Result<OperatorRecord, TargetRefusal>> {
  const valid = validEmail(email);
  if (!valid.ok) return valid;
  const found = await findOperatorByEmail(deps.databases.live.readClient, valid.value);
  return found
    ? ok(found)
    : refuse("operator_not_found", `no operator with e-mail ${valid.value}`, { field: "email" });
}

/** Disables an operator and ends their sessions; the last admin of every company stays. */
export async function disableOperator(
  deps: OperatorDeps,
  actor: AuditActor,
  email: unknown,
  now: number,
): Promise<Result<OperatorRecord, TargetRefusal | "operator_not_active" | "last_admin">> {
  const target = await targetOperator(deps, email);
  if (!target.ok) return target;
  return await deps.databases.live.writer.write(
    async (tx): Promise<Result<OperatorRecord, "operator_not_active" | "last_admin">> => {
      const current = (await findOperatorById(tx, target.value.id))!;
      if (current.disabledAt !== null) {
        return tx.abort(
          refuse("operator_not_active", `operator ${current.email} is disabled already`),
        );
      }
      if (
        current.role === "admin" && current.companyScope === null &&
        await countActiveFullAdmins(tx) === 1
      ) {
        return tx.abort(refuse(
          "last_admin",
          `operator ${current.email} is the last admin of every company: create another first`,
        ));
      }
      await setOperatorDisabled(tx, current.id, now);
      const sessionsEnded = await endSessionsOf(tx, current.id, now);
      const disabled = (await findOperatorById(tx, current.id))!;
      await appendAudit(tx, "live", actor, {
        at: now,
        action: "operator:disable",
        objectType: "operator",
        objectId: current.id,
        companyId: null,
        before: operatorView(current, now),
        after: { ...operatorView(disabled, now), sessions_ended: sessionsEnded },
      });
      return ok(disabled);
    },
  );
}

/**
 * Clears an operator's password and TOTP secret, unlocks the account, ends its sessions and sends
 * them a new enrollment code. Nobody sees their new credentials but them. Resetting an admin waits
 * for a second admin (operator.reset_admin); one's own credentials change with operator:password.
 */
export async function resetOperator(
  deps: OperatorDeps,
  actor: AuditActor,
  input: { email: unknown },
  now: number,
): Promise<
  Result<
    { operator: OperatorRecord; delivery: EnrollmentDelivery },
    TargetRefusal | "approval_required" | "own_credentials"
  >
> {
  const target = await targetOperator(deps, input.email);
  if (!target.ok) return target;
  if (target.value.id === actor.operator?.id) {
    return refuse(
      "own_credentials",
      "your own credentials change with operator:password (current password and TOTP code)",
      { field: "email" },
    );
  }
  if (target.value.role === "admin") {
    return refuse("approval_required", "resetting an admin waits for a second admin's approval");
  }
  return ok(
    await deps.databases.live.writer.write((tx) =>
      clearCredentialsInUnit(tx, deps, actor, target.value.id, now, {})
    ),
  );
}

/** An operator's credentials cleared and a reset enrollment issued, in the caller's unit. */
export async function clearCredentialsInUnit(
  tx: Parameters<Parameters<Database["writer"]["write"]>[0]>[0],
  deps: Pick<OperatorDeps, "dev">,
  actor: AuditActor,
  operatorId: string,
  now: number,
  note: Record<string, unknown>,
): Promise<{ operator: OperatorRecord; delivery: EnrollmentDelivery }> {
  const current = (await findOperatorById(tx, operatorId))!;
  await setOperatorCredentials(tx, current.id, {
    passwordHash: NOT_ENROLLED,
    totpSecretSealed: null,
  });
  const sessionsEnded = await endSessionsOf(tx, current.id, now);
  const after = (await findOperatorById(tx, current.id))!;
  const delivery = await issueEnrollment(tx, deps, after, "reset", now);
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "operator:reset",
    objectType: "operator",
    objectId: current.id,
    companyId: null,
    before: operatorView(current, now),
    after: {
      ...operatorView(after, now),
      credentials: "cleared: the operator enrols again",
      sessions_ended: sessionsEnded,
      enrollment: delivery.enrollment,
      ...note,
    },
  });
  return { operator: after, delivery };
}

/**
 * Changes an operator's role. Raising anyone to admin waits for a second admin
 * (operator.promote_admin); lowering keeps at least one admin of every company.
 */
export async function changeRole(
  deps: OperatorDeps,
  actor: AuditActor,
  input: { email: unknown; role: unknown },
  now: number,
): Promise<
  Result<OperatorRecord, TargetRefusal | "approval_required" | "last_admin" | "operator_not_active">
> {
  const target = await targetOperator(deps, input.email);
  if (!target.ok) return target;
  if (typeof input.role !== "string" || !isRole(input.role)) {
    return refuse(
      "invalid_input",
      `--role ${JSON.stringify(input.role ?? null)}: one of ${ROLES.join(", ")}`,
      { field: "role" },
    );
  }
  if (input.role === "admin" && target.value.role !== "admin") {
    return refuse("approval_required", "raising an operator to admin waits for a second admin");
  }
  const role = input.role;
  return await deps.databases.live.writer.write(
    async (tx): Promise<Result<OperatorRecord, "last_admin" | "operator_not_active">> => {
      const current = (await findOperatorById(tx, target.value.id))!;
      if (current.disabledAt !== null) {
        return tx.abort(refuse("operator_not_active", `operator ${current.email} is disabled`));
      }
      if (
        current.role === "admin" && role !== "admin" && current.companyScope === null &&
        await countActiveFullAdmins(tx) === 1
      ) {
        return tx.abort(refuse(
          "last_admin",
          `operator ${current.email} is the last admin of every company: raise another first`,
        ));
      }
      return ok(await setRoleInUnit(tx, actor, current, role, now, {}));
    },
  );
}

/** An operator's new role and its audit row, in the caller's unit. */
export async function setRoleInUnit(
  tx: Parameters<Parameters<Database["writer"]["write"]>[0]>[0],
  actor: AuditActor,
  current: OperatorRecord,
  role: Role,
  now: number,
  note: Record<string, unknown>,
): Promise<OperatorRecord> {
  await setOperatorRole(tx, current.id, role);
  const after = (await findOperatorById(tx, current.id))!;
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "operator:role",
    objectType: "operator",
    objectId: current.id,
    companyId: null,
    before: operatorView(current, now),
    after: { ...operatorView(after, now), ...note },
  });
  return after;
}

/** Every operator, oldest first. */
export async function listOperators(
  deps: OperatorDeps,
  now: number,
): Promise<ReturnType<typeof operatorView>[]> {
  return (await listOperatorRecords(deps.databases.live.readClient)).map((operator) =>
    operatorView(operator, now)
  );
}
