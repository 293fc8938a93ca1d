/**
 * Who is calling (contract §3): a user's HTTP Basic credentials, the company a CompanyApiKey names,
 * a line key, membership, and a line key's rotation. Lookups read committed data; the rotation
 * runs in the caller's write unit.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import { parseKey, sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { keyState } from "./credentials.ts";
import { type LineRef, resolveLine } from "./line_store.ts";
import {
  findCompanyByTin,
  findKeyByHash,
  findKeyBySecret,
  findLine,
  isMember,
  type LineIdentity,
  readCaller,
  type RotatedKey,
  rotateKeyInUnit,
  type StoredKey,
} from "./store.ts";

export type { LineIdentity, LineRef, RotatedKey, StoredKey };

/**
 * The user and company of HTTP Basic `TIN:user_api_key`: an active user key of a member of the
 * TIN's company. Every mismatch is the same refusal, so the answer does not tell which half was
 * wrong.
 */
export async function authenticateUser(
  database: Database,
  credentials: { tin: string; userKey: string },
  now: number,
): Promise<Result<{ userId: string; companyId: string }, "credentials_invalid">> {
  const refused = refuse("credentials_invalid", "the TIN or the user API key is not valid");
  const [company, key] = await Promise.all([
    findCompanyByTin(database.readClient, credentials.tin),
    findKeyBySecret(database.readClient, credentials.userKey, "user"),
  ]);
  if (!company || !key || key.userId === null || keyState(key, now) !== "active") return refused;
  if (!(await isMember(database.readClient, key.userId, company.id))) return refused;
  return ok({ userId: key.userId, companyId: company.id });
}

/**
 * At authenticate, with a CompanyApiKey: the company the Basic TIN names must be the key's, so
 * that a multi-company user's two credentials never disagree silently (contract §3).
 */
export function tinAgreesWithCompanyKey(
  tinCompanyId: string,
  keyCompanyId: string,
): Result<true, "tin_not_company_key"> {
  if (tinCompanyId === keyCompanyId) return ok(true);
  return refuse(
    "tin_not_company_key",
    "the Basic TIN names another company than the CompanyApiKey: send the TIN of the CompanyApiKey's company",
  );
}

/**
 * The company a Surface A request acts for and its first line. With a CompanyApiKey it must be an
 * active company key of a company the user belongs to; without, the user must still belong to
 * the token's company (checked on every request, so that removing a user takes effect at once).
 */
export async function apiCaller(
  database: Database,
  caller: { userId: string; companyId: string; companyApiKey: string | null },
  now: number,
): Promise<
  Result<
    { companyId: string; firstLine: LineRef | null },
    "company_key_invalid" | "not_member" | "membership_removed"
  >
> {
  const { companyApiKey } = caller;
  const keyInvalid = refuse(
    "company_key_invalid",
    "CompanyApiKey is not a company key of this environment",
  );
  if (companyApiKey !== null && parseKey(companyApiKey)?.kind !== "company") return keyInvalid;
  const reads = await readCaller(database.readClient, {
    userId: caller.userId,
    companyId: caller.companyId,
    companyKeyHash: companyApiKey === null ? null : await sha256Hex(companyApiKey),
  });
  if (companyApiKey === null) {
    if (!reads.member) {
      return refuse(
        "membership_removed",
        "the user of this access token no longer belongs to its company",
      );
    }
    return ok({ companyId: caller.companyId, firstLine: reads.firstLine });
  }
  const key = reads.companyKey;
  if (!key || keyState(key, now) !== "active" || key.companyId === null) return keyInvalid;
  if (!reads.member) {
    return refuse("not_member", "the user does not belong to the company of this CompanyApiKey");
  }
  return ok({ companyId: key.companyId, firstLine: reads.firstLine });
}

/** The line key with this SHA-256 of its secret and its line, whatever its state, or null. */
export async function lineKeyByHash(
  database: Database,
  hash: string,
): Promise<{ key: StoredKey; line: LineIdentity } | null> {
  const key = await findKeyByHash(database.readClient, hash, "line");
  const line = key?.lineId ? await findLine(database.readClient, key.lineId) : null;
  if (!key || !line || key.companyId === null) return null;
  return { key, line };
}

/** The company's line with this code, or its first line when none is named; null if none. */
export function companyLine(
  database: Database,
  companyId: string,
  code: string | null,
): Promise<LineRef | null> {
  return resolveLine(database.readClient, companyId, code);
}

/**
 * A new key of the same kind and owner; the old one keeps working for `graceSeconds`. A company
 * key is mirrored in both databases: both get the same `replacement`.
 */
export async function rotateStoredKey(
  tx: WriteTx,
  keyId: string,
  options: {
    now: number;
    graceSeconds: number;
    environment: Environment | null;
    replacement?: { id: string; secret: string };
  },
): Promise<Result<RotatedKey, "key_not_found" | "key_not_active" | "key_already_rotated">> {
  const rotated = await rotateKeyInUnit(tx, keyId, options);
  return rotated.ok ? rotated : tx.abort(rotated);
}
