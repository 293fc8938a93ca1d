/**
 * What the service loads before its API answers (issue 33): the API's app (routes/api_app.ts)
 * imports no console, admin command, sandbox page or rail's job, and its sandbox clock runs the
 * rails' jobs once they have loaded (the service wires them after the API answers).
 */
import assert from "node:assert/strict";
import { createApiApp } from "../routes/api_app.ts";
import type { RailJobs } from "../routes/context.ts";
import { withHttpFixture } from "./http_fixture.ts";

/** Modules the API must answer without (the whole app imports some at first use). */
const LATER_MODULES = [
  "lib/payouts/runtime.ts",
  // The provider simulators the portal's card and instant pages bind, at their first use.
  "lib/payouts/provider_reaches.ts",
  "lib/paypal/simulator.ts",
  "lib/cards/sandbox_lithic.ts",
  "lib/admin/commands.ts",
  "routes/admin.ts",
  "routes/console/mod.tsx",
  "routes/sandbox.tsx",
  "routes/paypal.ts",
  // The payee's pages, with the whole app: a payee's first page at start waits for it.
  "routes/portal/mod.tsx",
  "routes/portal/landing.tsx",
  "routes/documents.ts",
  "routes/digital_checks.tsx",
  // The gauges of /metrics, at its first scrape.
  "lib/console/needs_action.ts",
  "lib/reconciliation/views.ts",
];

/** The routes the service's start loads: the lazy app, the API's core and what they share. */
const CORE_MODULES = [
  "routes/lazy_app.ts",
  "routes/api_core.ts",
  "routes/api_routes.ts",
  "routes/known_paths.ts",
  "routes/credential_shape.ts",
  "routes/docs_headers.ts",
  "routes/errors.ts",
  "routes/access_log.ts",
];

/** The local, Node and npm modules `entry` imports statically, directly or not (`deno info`). */
async function staticGraphOf(entry: string): Promise<Set<string>> {
  const root = new URL("../", import.meta.url);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL(entry, root).pathname],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.ok(output.success, `deno info ${entry}`);
  const graph: {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier?: string }; isDynamic?: boolean }[];
    }[];
  } = JSON.parse(new TextDecoder().decode(output.stdout));
  const importsOf = new Map(graph.modules.map((module) => [
    module.specifier,
    (module.dependencies ?? []).filter((dependency) => !dependency.isDynamic)
      .flatMap((dependency) => dependency.code?.specifier ?? []),
  ]));
  const reached = new Set<string>();
  const pending = [new URL(entry, root).href];
  while (pending.length > 0) {
    const specifier = pending.pop()!;
    if (reached.has(specifier)) continue;
    reached.add(specifier);
    pending.push(...(importsOf.get(specifier) ?? []));
  }
  return new Set(
    [...reached].filter((specifier) =>
      specifier.startsWith(root.href) || /^(node|npm):/.test(specifier)
    ).map((specifier) =>
      specifier.startsWith(root.href) ? specifier.slice(root.href.length) : specifier
    ),
  );
}

Deno.test("the API's app imports none of the console, the admin commands, the sandbox pages, the payee's pages and the rails' jobs; the whole app does", async () => {
  const [api, whole] = await Promise.all([
    staticGraphOf("routes/api_app.ts"),
    staticGraphOf("routes/app.ts"),
  ]);
  for (
    const module of [
      "routes/admin.ts",
      "routes/console/mod.tsx",
      "routes/sandbox.tsx",
      "routes/portal/mod.tsx",
    ]
  ) {
    assert.ok(whole.has(module), module);
  }
  assert.deepEqual(LATER_MODULES.filter((module) => api.has(module)), []);
  assert.deepEqual([...api].filter((module) => module.startsWith("routes/console/")), []);
  assert.ok(api.has("routes/v1/disbursements.ts") && api.has("routes/api/disbursements.ts"));
});

Deno.test("nothing the service loads before its first API answer imports a Node module but SQLite's: Node's crypto (the audit chain's keys, webhook signing) comes after it", async () => {
  // main.ts's buildApi and its check of the audit log's last row (lib/audit/store.ts).
  const graphs = await Promise.all(
    ["main.ts", "routes/api_app.ts", "lib/audit/store.ts", "db/query_layer.ts"].map(staticGraphOf),
  );
  const nodeModules = new Set(
    graphs.flatMap((graph) => [...graph]).filter((module) => module.startsWith("node:")),
  );
  assert.deepEqual([...nodeModules].sort(), ["node:sqlite"]);
  const api = graphs[1];
  assert.ok(!api.has("lib/audit/anchor.ts") && !api.has("lib/audit/service.ts"));
});

Deno.test("what the service loads before it listens is its core: no route group, no hono, drizzle, valibot or jose, no schema, no database code", async () => {
  const service = await staticGraphOf("main.ts");
  for (const module of ["routes/lazy_app.ts", "routes/api_core.ts", "routes/api_routes.ts"]) {
    assert.ok(service.has(module), module);
  }
  assert.deepEqual(
    [...service].filter((module) =>
      module.startsWith("routes/") && !CORE_MODULES.includes(module) ||
      /^npm:(hono|drizzle-orm|valibot|jose)@/.test(module) ||
      ["db/schema.ts", "lib/identity/service.ts"].includes(module) ||
      // The databases open after the listen (embedded ones): their code loads then.
      ["db/client.ts", "db/embedded_client.ts", "db/writer.ts"].includes(module)
    ),
    [],
  );
  // A start from a current bundle checks its stamp and loads nothing of the build.
  const start = await staticGraphOf("cli/start.ts");
  assert.ok(start.has("cli/bundle_stamp.ts") && !start.has("cli/build.ts"));
});

Deno.test("the API's sandbox clock waits for the rails' jobs when they have not loaded yet, then runs them", async () => {
  await withHttpFixture(async (f) => {
    let wire: (jobs: RailJobs) => void = () => {};
    let asked = 0;
    const wired = new Promise<RailJobs>((resolve) => wire = resolve);
    const app = createApiApp({
      ...f.deps,
      jobHandlers: () => (asked++, wired),
    });
    const headers = {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    };
    const balance = await app.request("/v1/ledgers/auto/balance", { headers });
    assert.equal(balance.status, 200, "the API answers without the rails' jobs");
    await balance.body?.cancel();
    assert.equal(asked, 0);
    let answered = false;
    const advance = Promise.resolve(app.request("/v1/sandbox/clock/advance", {
      method: "POST",
      headers,
      body: JSON.stringify({ seconds: 60 }),
    })).then((response) => (answered = true, response));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual([asked, answered], [1, false], "the advance waits for the rails' jobs");
    wire(f.deps.jobHandlers);
    const response = await advance;
    const body = await response.json();
    assert.deepEqual([response.status, body.object, body.advanced_seconds], [
      200,
      "sandbox_clock",
      60,
    ]);
  });
});
