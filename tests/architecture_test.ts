/**
 * The arrows of the floor plan (STYLE.md: routes → lib/<capability>/service → store → db; rules
 * modules are leaves), checked on the import graph of every .ts/.tsx file outside tests/. Imports
 * are read from the source text (`import … from`, `export … from`, `import "…"`, `import("…")`);
 * an import is type-only when it says `import type`/`export type`, or every name it brings is
 * marked `type`. The rules:
 *
 * (a) A pure module imports no storage, directly or through any module it imports. Storage is
 *     anything under db/, any store module (a file named `store.ts` or `*_store.ts`), and the
 *     storage libraries (`@libsql/client`, `drizzle-orm`, `node:sqlite`), type-only imports
 *     included: a rule that names a row type is already shaped by a table. The pure modules are
 *     listed in PURE_MODULES; each must exist.
 * (b) A file under routes/ imports no store module (type-only included: what a route shows comes
 *     from the capability's service, which exports the types it returns), nothing of db/ but
 *     `import type` from db/client.ts (the `Database` handle) and db/scheduler.ts (the
 *     `JobHandlers` the app is given), and no storage library. Writes reach the writer only
 *     through a service.
 * (c) Nothing under lib/ or db/ imports routes/: HTTP depends on the capabilities, never the
 *     reverse.
 *
 * The checker runs on an in-memory file map too, so the last test shows it reporting deliberate
 * bad imports.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";

/** Decisions that must not depend on storage: the leaves of the graph. */
const PURE_MODULES = [
  "db/job_policy.ts",
  "lib/ach/bank_settings.ts",
  "lib/ach/cutoffs.ts",
  "lib/ach/file_model.ts",
  "lib/ach/import_rules.ts",
  "lib/ach/nacha.ts",
  "lib/ach/nacha_records.ts",
  "lib/backup/schedule.ts",
  "lib/audit/rules.ts",
  "lib/checks/account.ts",
  "lib/checks/positive_pay.ts",
  "lib/documents/certificate.ts",
  "lib/identity/credentials.ts",
  "lib/identity/rules.ts",
  "lib/idempotency/rules.ts",
  "lib/ledger/postings.ts",
  "lib/ledger/tieout.ts",
  "lib/ledger/trial_balance.ts",
  "lib/ledger/types.ts",
  "lib/notify/messages.ts",
  "lib/obligations/deadline.ts",
  "lib/obligations/naupa.ts",
  "lib/obligations/settings.ts",
  "lib/obligations/unclaimed_rules.ts",
  "lib/operators/rules.ts",
  "lib/payouts/disbursement_status.ts",
  "lib/payouts/fees.ts",
  "lib/payouts/policy.ts",
  "lib/payouts/states.ts",
  "lib/payouts/transition.ts",
  "lib/paypal/rules.ts",
  "lib/paypal/settings.ts",
  "lib/platform/business_days.ts",
  "lib/platform/money.ts",
  "lib/platform/result.ts",
  "lib/portal/method_details.ts",
  "lib/portal/portal_text.ts",
  "lib/reconciliation/adjustment.ts",
  "lib/reconciliation/bai2.ts",
  "lib/reconciliation/bai2_writer.ts",
  "lib/reconciliation/camt053.ts",
  "lib/reconciliation/matching.ts",
  "lib/reconciliation/readers.ts",
  "lib/reconciliation/statement.ts",
  "lib/sanctions/fixture.ts",
  "lib/sanctions/rules.ts",
  "lib/webhooks/circuit.ts",
  "lib/webhooks/endpoint_url.ts",
  "lib/webhooks/event_reason.ts",
  "lib/webhooks/payloads.ts",
  "lib/webhooks/schedule.ts",
  "lib/webhooks/signing.ts",
] as const;

/** The only things of db/ a route may name, and only as types. */
const ROUTE_DB_TYPES = new Set(["db/client.ts", "db/scheduler.ts"]);

const STORAGE_LIBRARIES = /^(npm:)?(@libsql\/client|drizzle-orm|node:sqlite)(\/|@|$)/;

export interface Import {
  /** Repository-relative path for a relative import; the bare specifier otherwise. */
  readonly target: string;
  readonly typeOnly: boolean;
}

const STATIC =
  /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?([\w\s{},*$]*?)\s*from\s*["']([^"']+)["']/g;
const SIDE_EFFECT = /(?:^|[;\n])\s*import\s*["']([^"']+)["']/g;
const DYNAMIC = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** The imports of one file, read from its text. */
export function importsOf(path: string, source: string): Import[] {
  // Comments may mention imports; strings of code do not, in this repository.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const resolve = (specifier: string) =>
    specifier.startsWith(".") ? normalize(join(dirname(path), specifier)) : specifier;
  const found: Import[] = [];
  for (const [, , typeKeyword, clause, specifier] of code.matchAll(STATIC)) {
    const names = clause.replace(/[{}]/g, " ").split(",").map((n) => n.trim()).filter(Boolean);
    const everyNameIsType = names.length > 0 && names.every((n) => /^type\s/.test(n));
    found.push({ target: resolve(specifier), typeOnly: Boolean(typeKeyword) || everyNameIsType });
  }
  for (const pattern of [SIDE_EFFECT, DYNAMIC]) {
    for (const [, specifier] of code.matchAll(pattern)) {
      found.push({ target: resolve(specifier), typeOnly: false });
    }
  }
  return found;
}

const isStore = (target: string) => /(^|\/)(\w+_)?store\.ts$/.test(target);
const isStorage = (target: string) =>
  target.startsWith("db/") || isStore(target) || STORAGE_LIBRARIES.test(target);

/** Every broken arrow of the graph, one sentence each; empty when the floor plan holds. */
export function architectureViolations(
  files: ReadonlyMap<string, string>,
  pureModules: readonly string[] = PURE_MODULES,
): string[] {
  const graph = new Map([...files].map(([path, source]) => [path, importsOf(path, source)]));
  const violations: string[] = [];

  for (const pure of pureModules) {
    if (!graph.has(pure)) {
      violations.push(`${pure} is listed as pure but does not exist`);
      continue;
    }
    // Breadth first, so the chain reported is the shortest one.
    const via = new Map<string, string | null>([[pure, null]]);
    const queue = [pure];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      for (const { target } of graph.get(next) ?? []) {
        if (via.has(target)) continue;
        via.set(target, next);
        if (isStorage(target)) {
          const chain = [target];
          for (let step = via.get(target); step; step = via.get(step)) chain.unshift(step);
          violations.push(`pure module ${pure} reaches storage: ${chain.join(" → ")}`);
          queue.length = 0;
          break;
        }
        if (graph.has(target)) queue.push(target);
      }
    }
  }

  for (const [path, imports] of graph) {
    for (const { target, typeOnly } of imports) {
      if (path.startsWith("routes/")) {
        if (isStore(target)) {
          violations.push(`route ${path} imports the store ${target}: call its service`);
        } else if (target.startsWith("db/") && !(typeOnly && ROUTE_DB_TYPES.has(target))) {
          violations.push(
            `route ${path} imports ${target}${
              typeOnly ? " (type)" : ""
            }: of db/ a route names only the types of db/client.ts and db/scheduler.ts`,
          );
        } else if (STORAGE_LIBRARIES.test(target)) {
          violations.push(`route ${path} imports the storage library ${target}`);
        }
      }
      if ((path.startsWith("lib/") || path.startsWith("db/")) && target.startsWith("routes/")) {
        violations.push(`${path} imports ${target}: HTTP depends on lib/, never the reverse`);
      }
    }
  }
  return violations;
}

const root = normalize(join(dirname(new URL(import.meta.url).pathname), ".."));

/** Every .ts/.tsx file of the repository outside tests/, node_modules and dot folders. */
async function repositoryFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      const name = relative(root, path);
      if (entry.isDirectory) {
        if (entry.name.startsWith(".") || ["node_modules", "tests"].includes(name)) continue;
        await walk(path);
      } else if (/\.tsx?$/.test(entry.name)) {
        files.set(name, await Deno.readTextFile(path));
      }
    }
  };
  await walk(root);
  return files;
}

Deno.test("architecture: pure modules reach no storage, routes reach capabilities through services, lib/ and db/ never import routes/", async () => {
  const files = await repositoryFiles();
  assert.ok(files.has("routes/app.ts") && files.has("db/writer.ts"), "the walk found the tree");
  assert.deepEqual(architectureViolations(files), []);
});

Deno.test("architecture: imports are read with their type-only marks and resolved from the file", () => {
  const source = `/** import { nothing } from "../commented.ts" */
import { a, type B } from "./a.ts";
import type { C } from "../db/client.ts";
import {
  type D,
  type E,
} from "../lib/x/store.ts";
import * as v from "valibot";
export { f } from "./f.ts";
export type { G } from "./g.ts";
import "./side_effect.ts";
const later = await import("../lib/late.ts");
export const notAnImport = 1; // from "./nowhere.ts"
`;
  assert.deepEqual(importsOf("routes/api/file.ts", source), [
    { target: "routes/api/a.ts", typeOnly: false },
    { target: "routes/db/client.ts", typeOnly: true },
    { target: "routes/lib/x/store.ts", typeOnly: true },
    { target: "valibot", typeOnly: false },
    { target: "routes/api/f.ts", typeOnly: false },
    { target: "routes/api/g.ts", typeOnly: true },
    { target: "routes/api/side_effect.ts", typeOnly: false },
    { target: "routes/lib/late.ts", typeOnly: false },
  ]);
});

Deno.test("architecture: deliberate bad imports are each reported", () => {
  const files = new Map([
    // A pure rule that reaches storage through a module that is not itself a store.
    ["lib/payouts/policy.ts", 'import { helper } from "./helper.ts";\n'],
    ["lib/payouts/helper.ts", 'import type { Db } from "../../db/writer.ts";\n'],
    ["lib/payouts/states.ts", 'import { sql } from "drizzle-orm";\n'],
    ["lib/payouts/store.ts", 'import type { WriteTx } from "../../db/writer.ts";\n'],
    ["lib/payouts/service.ts", 'import { applyMove } from "./store.ts";\n'],
    ["db/writer.ts", 'import { createClient } from "@libsql/client";\n'],
    ["db/client.ts", 'import { GroupCommitWriter } from "./writer.ts";\n'],
    ["db/scheduler.ts", 'import type { Database } from "./client.ts";\n'],
    // Allowed: a service, and the Database and JobHandlers types.
    [
      "routes/good.ts",
      'import { cancel } from "../lib/payouts/service.ts";\n' +
      'import type { Database } from "../db/client.ts";\n' +
      'import type { JobHandlers } from "../db/scheduler.ts";\n',
    ],
    ["routes/reads_store.ts", 'import { loadPayout } from "../lib/payouts/store.ts";\n'],
    ["routes/names_row.ts", 'import type { PayoutRow } from "../lib/payouts/store.ts";\n'],
    ["routes/writes.ts", 'import type { WriteTx } from "../db/writer.ts";\n'],
    ["routes/opens.ts", 'import { openDatabase } from "../db/client.ts";\n'],
    ["routes/queries.ts", 'import { desc } from "drizzle-orm";\n'],
    ["lib/payouts/jobs.ts", 'import { errorBody } from "../../routes/errors.ts";\n'],
  ]);
  assert.deepEqual(
    architectureViolations(files, [
      "lib/payouts/policy.ts",
      "lib/payouts/states.ts",
      "lib/payouts/gone.ts",
    ]),
    [
      "pure module lib/payouts/policy.ts reaches storage: lib/payouts/policy.ts → lib/payouts/helper.ts → db/writer.ts",
      "pure module lib/payouts/states.ts reaches storage: lib/payouts/states.ts → drizzle-orm",
      "lib/payouts/gone.ts is listed as pure but does not exist",
      "route routes/reads_store.ts imports the store lib/payouts/store.ts: call its service",
      "route routes/names_row.ts imports the store lib/payouts/store.ts: call its service",
      "route routes/writes.ts imports db/writer.ts (type): of db/ a route names only the types of db/client.ts and db/scheduler.ts",
      "route routes/opens.ts imports db/client.ts: of db/ a route names only the types of db/client.ts and db/scheduler.ts",
      "route routes/queries.ts imports the storage library drizzle-orm",
      "lib/payouts/jobs.ts imports routes/errors.ts: HTTP depends on lib/, never the reverse",
    ],
  );
});

Deno.test("architecture: lib/operators, which decides approvals, imports no capability whose approved actions it runs (the registry is assembled in lib/admin)", async () => {
  const files = await repositoryFiles();
  const capabilities = /^lib\/(ach|checks|paypal|rails|funding|payouts)\//;
  const found = [...files].flatMap(([path, source]) =>
    path.startsWith("lib/operators/")
      ? importsOf(path, source).filter((i) => !i.typeOnly && capabilities.test(i.target))
        .map((i) => `${path} imports ${i.target}`)
      : []
  );
  // Before: lib/operators/approvals.ts imported lib/ach, lib/paypal, lib/rails, lib/funding and
  // lib/payouts for their actions, while those imported lib/operators: a circle.
  assert.deepEqual(found, []);
});

Deno.test("architecture: every module of lib/ that calls out of the service waits first for the commits it may have read to be durable (untilDurable)", async () => {
  const files = await repositoryFiles();
  const callsOut =
    /\bfetch\(|sendMail\(|ssh2-sftp-client|from "lithic"|import\("lithic"\)|aws4fetch|pinnedFetch\(|Deno\.connect/;
  const exempt = new Set([
    // A backup copies the database: a commit in the copy that is not yet durable here is still a
    // true state, and nothing outside acts on it.
    "lib/backup/s3.ts",
    // The fetch the dispatcher sends webhooks with: the dispatcher waits before calling it.
    "lib/webhooks/pinned_fetch.ts",
  ]);
  const callers = [...files]
    .filter(([name, text]) => name.startsWith("lib/") && callsOut.test(text))
    .map(([name]) => name)
    .sort();
  assert.deepEqual(callers, [
    "lib/ach/transport.ts",
    "lib/backup/s3.ts",
    "lib/cards/client.ts",
    "lib/instant/client.ts",
    "lib/lob/client.ts",
    "lib/notify/sms.ts",
    "lib/notify/smtp.ts",
    "lib/paypal/client.ts",
    "lib/webhooks/dispatcher.ts",
    "lib/webhooks/pinned_fetch.ts",
  ]);
  const waitingFor = (text: string) => /\buntilDurable\(\)/.test(text);
  assert.deepEqual(
    callers.filter((name) => !exempt.has(name) && !waitingFor(files.get(name)!)),
    [],
  );
});
