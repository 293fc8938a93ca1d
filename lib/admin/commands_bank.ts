/**
 * The operator commands of bank settings and sanctions screening: bank:set and bank:show,
 * ofac:load, and listing, clearing or rejecting the payouts held for sanctions review. Each takes
 * --environment (live by default) where it has one and names the environment it acted on. Paths
 * are read by the process that runs the command: the CLI, or the running service through its
 * loopback endpoint (the CLI makes them absolute first).
 */
import { basename } from "node:path";
import type { Environment } from "../platform/config.ts";
import { sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { maskedBankSettings } from "../ach/bank_settings.ts";
import { readBankSettings, readStoredBankSettings } from "../ach/bank_store.ts";
import { bankSealedSettings } from "../ach/bank_settings_approval.ts";
import { SANCTIONS_FILE_BYTES_MAX } from "../sanctions/rules.ts";
import {
  clearReview,
  loadSanctionsList,
  parseSanctionsUpload,
  rejectReview,
  type ReviewDecision,
  type ReviewRefusal,
} from "../sanctions/service.ts";
import {
  findReview,
  listInForce,
  listReviews,
  REVIEW_STATUSES,
  type ReviewStatus,
  type SanctionsReview,
} from "../sanctions/store.ts";
import {
  type Command,
  type CommandContext,
  environmentReach,
  objectReach,
  pathFlag,
  rowsIn,
} from "./command_kit.ts";
import { sealedSettingsCommands } from "./sealed_settings.ts";

/** A bank settings file is a page of JSON; anything larger is not one. */
const SETTINGS_FILE_BYTES_MAX = 1024 * 1024;
/** An operator's reason for a sanctions decision, for the audit log. */
const REVIEW_REASON_LENGTH_MAX = 500;

/** A file's bytes, refused when it is missing or larger than `bytesMax`. */
async function readFileAtMost(
  path: string,
  name: string,
  bytesMax: number,
): Promise<Result<Uint8Array, "invalid_input">> {
  let size: number;
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) throw new Error("not a file");
    size = info.size;
  } catch {
    return refuse("invalid_input", `--${name} ${JSON.stringify(path)}: no such file`, {
      field: name,
    });
  }
  if (size > bytesMax) {
    return refuse(
      "invalid_input",
      `--${name} ${JSON.stringify(path)}: ${size} bytes, at most ${bytesMax} are taken`,
      { field: name },
    );
  }
  return ok(await Deno.readFile(path));
}

const bankSettingsCommands = sealedSettingsCommands({
  rail: bankSealedSettings,
  setSummary:
    "set a company's bank settings from a JSON file (test: at once; live: once a second admin approves)",
  showSummary: "show a company's bank settings, account numbers masked and SFTP secrets left out",
  fileHelp: "the settings as JSON (see the README's Going live with ACH)",
  fileBytesMax: SETTINGS_FILE_BYTES_MAX,
  approvalSummary: (company, settings) =>
    `bank:set ${company.name} (TIN ${company.tin}): ODFI ${settings.odfiRouting}, ${settings.cutoffs.length} cutoffs in ${settings.timeZone}, ${
      settings.sftp ? `SFTP ${settings.sftp.host}` : "no SFTP (files wait for download)"
    }`,
  masked: maskedBankSettings,
  // In test a company without its own settings is shown the sandbox bank's.
  read: async (reader, secretBox, environment, companyId) => {
    const stored = await readStoredBankSettings(reader, secretBox, companyId);
    const settings = stored ?? await readBankSettings(reader, secretBox, environment, companyId);
    return settings === null
      ? null
      : { settings, fields: { source: stored ? "stored" : "sandbox_bank" } };
  },
  notFoundMessage: (company, environment) =>
    `no bank settings for ${company.name} (TIN ${company.tin}) in ${environment}: set them with bank:set`,
});

const ofacLoad: Command = {
  summary:
    "load the OFAC SDN list as published (sdn.csv, and alt.csv for aliases) into live; it replaces the list in force",
  flags: { file: "the path of sdn.csv", alt: "the path of alt.csv (aliases)" },
  optional: ["alt"],
  paths: ["file", "alt"],
  role: "admin",
  reach: () => Promise.resolve(ok({ writes: ["live"], companies: "installation" })),
  audit: () => ({
    action: "ofac:load",
    objectType: "sanctions_list",
    objectId: null,
    companyId: null,
    snapshot: async (tx) => {
      const list = await listInForce(tx);
      return list && {
        id: list.id,
        sha256: list.sha256,
        entry_count: list.entryCount,
        file_name: list.fileName,
      };
    },
  }),
  run: async (ctx, f) => {
    const sdnPath = pathFlag(ctx, f, "file");
    if (!sdnPath.ok) return sdnPath;
    const sdn = await readFileAtMost(sdnPath.value, "file", SANCTIONS_FILE_BYTES_MAX);
    if (!sdn.ok) return sdn;
    let alt: Uint8Array | null = null;
    let altName: string | null = null;
    if (f.alt !== undefined) {
      const altPath = pathFlag(ctx, f, "alt");
      if (!altPath.ok) return altPath;
      const read = await readFileAtMost(altPath.value, "alt", SANCTIONS_FILE_BYTES_MAX);
      if (!read.ok) return read;
      alt = read.value;
      altName = basename(altPath.value);
    }
    const decode = (bytes: Uint8Array) => {
      // UTF-8, or else Windows-1252, in which older downloads of the list come.
      try {
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        return new TextDecoder("windows-1252").decode(bytes);
      }
    };
    const upload = { sdnCsv: decode(sdn.value), altCsv: alt === null ? null : decode(alt) };
    const parsed = parseSanctionsUpload(upload);
    if (!parsed.ok) return parsed;
    const sha256 = await sha256Hex(sdn.value);
    const altSha256 = alt === null ? null : await sha256Hex(alt);
    const fileName = [basename(sdnPath.value), altName].filter(Boolean).join(" + ");
    const loaded = await ctx.databases.live.writer.write((tx) =>
      loadSanctionsList(
        tx,
        { ...upload, sha256, fileName },
        parsed.value,
        ctx.actor.operator?.id ?? null,
        ctx.now,
      )
    );
    return ok({
      environment: "live",
      list_id: loaded.id,
      sha256,
      alt_sha256: altSha256,
      entry_count: loaded.entryCount,
      file_name: loaded.fileName,
      replaced: loaded.replaced,
    });
  },
};

function reviewView(review: SanctionsReview, environment: Environment) {
  return {
    id: review.id,
    environment,
    company_id: review.companyId,
    payout_id: review.payoutId,
    list_id: review.listId,
    status: review.status,
    matches: review.matches.map((m) => ({
      screened_name: m.screenedName,
      list_name: m.listName,
      entry_number: m.entryNumber,
      program: m.program,
      score: m.score,
      rule: m.rule,
    })),
    created_at: new Date(review.createdAt).toISOString(),
    decided_by: review.decidedBy,
    decided_at: review.decidedAt === null ? null : new Date(review.decidedAt).toISOString(),
    reason: review.reason,
  };
}

const sanctionsReviews: Command = {
  summary: "list sanctions reviews, newest first (open by default)",
  flags: {
    status: "open (default), cleared, rejected, canceled or all",
    environment: "live (default) or test",
  },
  role: "admin",
  reach: (_request, f) => {
    const named = environmentReach(f, false);
    return Promise.resolve(named.ok ? ok({ writes: [], companies: [] }) : named);
  },
  run: async (ctx, f) => {
    const named = environmentReach(f, false);
    if (!named.ok) return named;
    const status = f.status ?? "open";
    if (status !== "all" && !(REVIEW_STATUSES as readonly string[]).includes(status)) {
      return refuse(
        "invalid_input",
        `--status ${JSON.stringify(status)}: ${REVIEW_STATUSES.join(", ")} or all`,
        { field: "status" },
      );
    }
    const environment = named.value.environment;
    const listed = await listReviews(ctx.databases[environment].readClient, {
      status: status === "all" ? null : status as ReviewStatus,
      companyIds: ctx.operator?.companyScope ?? null,
    });
    return ok({
      environment,
      reviews: listed.reviews.map((review) => reviewView(review, environment)),
      has_more: listed.hasMore,
    });
  },
};

/** Clearing or rejecting one held payout's review, audited with the operator named. */
function reviewDecisionCommand(decision: "clear" | "reject"): Command {
  const action = `sanctions:${decision}`;
  const decide = decision === "clear" ? clearReview : rejectReview;
  return {
    summary: decision === "clear"
      ? "clear a payout held for sanctions review (not the listed party): it is submitted again"
      : "reject a payout held for sanctions review (the match stands): it fails with sanctions_review",
    flags: {
      review: "the review id (scr_…)",
      reason: "why, for the audit log",
      environment: "live (default) or test",
    },
    role: "admin",
    reach: objectReach(
      (request, environment, f) => findReview(request.databases[environment].readClient, f.review),
      (f, environment) =>
        refuse("review_not_found", `no sanctions review ${f.review} in ${environment}`, {
          field: "review",
        }),
      (f) => f.review,
    ),
    audit: (f, reach) => ({
      action,
      objectType: "sanctions_review",
      objectId: f.review,
      companyId: reach.companies[0] ?? null,
      snapshot: (tx) =>
        rowsIn(
          tx,
          `SELECT r.id, r.status, r.decided_by, r.reason, r.payout_id, p.status AS payout_status
             FROM sanctions_reviews r JOIN payouts p ON p.id = r.payout_id WHERE r.id = ?`,
          [f.review],
        ),
    }),
    run: async (ctx: CommandContext, f) => {
      const named = environmentReach(f, true);
      if (!named.ok) return named;
      const reason = (f.reason ?? "").trim();
      if (reason === "" || reason.length > REVIEW_REASON_LENGTH_MAX) {
        return refuse(
          "invalid_input",
          `${action} needs --reason: why, 1 to ${REVIEW_REASON_LENGTH_MAX} characters, for the audit log`,
          { field: "reason" },
        );
      }
      const environment = named.value.environment;
      const database = ctx.databases[environment];
      const review = await findReview(database.readClient, f.review);
      if (!review) {
        return refuse("review_not_found", `no sanctions review ${f.review} in ${environment}`, {
          field: "review",
        });
      }
      const now = ctx.now;
      const decided = await database.writer.write(
        async (tx): Promise<Result<ReviewDecision, ReviewRefusal>> => {
          const done = await decide(tx, f.review, {
            operatorId: ctx.actor.operator?.id ?? null,
            reason,
          }, now);
          return done.ok ? done : tx.abort(done);
        },
      );
      if (!decided.ok) return decided;
      return ok({
        environment,
        review: reviewView(decided.value.review, environment),
        decided_by: ctx.actor.operator?.email ?? null,
        payout_id: decided.value.payout.id,
        payout_status: decided.value.payout.status,
        failure_reason: decided.value.payout.failureReason,
      });
    },
  };
}

export const bankCommands: Readonly<Record<string, Command>> = {
  "bank:set": bankSettingsCommands.set,
  "bank:show": bankSettingsCommands.show,
  "ofac:load": ofacLoad,
  "sanctions:reviews": sanctionsReviews,
  "sanctions:clear": reviewDecisionCommand("clear"),
  "sanctions:reject": reviewDecisionCommand("reject"),
};
