/**
 * Settings a rail keeps sealed with ENCRYPTION_KEY (bank settings, PayPal settings), whose live
 * change waits for a second admin. The approval's payload shows an approver the company, the
 * fingerprint and what the rail calls readable; the settings themselves travel sealed in it. Once
 * approved they are checked again and saved, and the audit row names fingerprints, never the
 * settings.
 */
import type { WriteTx } from "../../db/writer.ts";
import type { ApprovalKind } from "./rules.ts";
import type { ApprovedAction } from "./approvals.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { appendAudit } from "../audit/store.ts";
import { ok, type Result } from "../platform/result.ts";

/** What a save left: the fingerprint of the saved document and the one it replaced. */
export interface SavedSealedSettings {
  readonly fingerprint: string;
  readonly previousFingerprint: string | null;
}

/** How one rail's sealed settings are checked, sealed, saved and shown to an approver. */
export interface SealedSettingsRail<S> {
  /** The approval kind of a live change: `bank_settings.change`. */
  readonly kind: ApprovalKind;
  /** The audit action of a change, which is also the command that asks for it: `bank:set`. */
  readonly action: string;
  /** The table holding the sealed settings, and the audit rows' object type: `bank_settings`. */
  readonly table: string;
  readonly check: (input: unknown, environment: Environment) => Result<S, "invalid_input">;
  /** The settings as the JSON a settings file holds, which the approval's payload seals. */
  readonly json: (settings: S) => Record<string, unknown>;
  readonly fingerprint: (settings: S) => Promise<string>;
  readonly save: (
    tx: WriteTx,
    secretBox: SecretBox,
    companyId: string,
    settings: S,
    operatorId: string | null,
    now: number,
  ) => Promise<SavedSealedSettings>;
  /** What of the settings an approver and the audit row may read besides the fingerprint. */
  readonly readable: (settings: S) => Record<string, unknown>;
  /** What an approved change also sets going in its unit, after the save. */
  readonly afterApprovedSave?: (
    tx: WriteTx,
    companyId: string,
    settings: S,
    now: number,
  ) => Promise<void>;
}

/** The payload of a change approval: what an approver may read, and the rest sealed. */
interface SealedSettingsChangePayload {
  readonly company_name: string;
  readonly tin: string;
  readonly fingerprint: string;
  readonly settings_sealed: string;
}

/** Seals settings into a change approval's payload. */
export async function sealedSettingsChangePayload<S>(
  rail: SealedSettingsRail<S>,
  secretBox: SecretBox,
  company: { name: string; tin: string },
  settings: S,
): Promise<Record<string, unknown>> {
  return {
    company_name: company.name,
    tin: company.tin,
    fingerprint: await rail.fingerprint(settings),
    ...rail.readable(settings),
    settings_sealed: await secretBox.sealText(JSON.stringify(rail.json(settings))),
  };
}

/** The rail's live settings saved once a second admin approves them. */
export function sealedSettingsApprovedAction<S>(rail: SealedSettingsRail<S>): ApprovedAction {
  return async (tx, approval, { deps, actor, now }) => {
    const payload = approval.payload as unknown as SealedSettingsChangePayload;
    const companyId = approval.companyId;
    if (companyId === null) throw new Error(`approval ${approval.id} names no company`);
    const json = JSON.parse(await deps.secretBox.openText(payload.settings_sealed));
    const checked = rail.check(json, "live");
    if (!checked.ok) return checked;
    const saved = await rail.save(
      tx,
      deps.secretBox,
      companyId,
      checked.value,
      approval.requestedBy,
      now,
    );
    await rail.afterApprovedSave?.(tx, companyId, checked.value, now);
    await appendAudit(tx, "live", actor, {
      at: now,
      action: rail.action,
      objectType: rail.table,
      objectId: companyId,
      companyId,
      before: saved.previousFingerprint === null
        ? null
        : { fingerprint: saved.previousFingerprint },
      after: {
        fingerprint: saved.fingerprint,
        ...rail.readable(checked.value),
        requested_by: approval.requestedBy,
        approval_id: approval.id,
      },
    });
    return ok({
      environment: "live",
      company_id: companyId,
      tin: payload.tin,
      fingerprint: saved.fingerprint,
      previous_fingerprint: saved.previousFingerprint,
    });
  };
}
