/**
 * The typed client (client/): its generated files are what `deno task client` makes from the
 * routes today, `deno check` refuses wrong paths, parameters and bodies, and client/example.ts
 * type-checks and runs against `main.ts --dev` on a free port: payee, disbursement, read back,
 * and a webhook verified with the signing helper.
 */
import assert from "node:assert/strict";
import { freePort } from "../bench/service.ts";
import { defaultDocumentText, documentPath, generateTypes, typesPath } from "../client/generate.ts";

const root = new URL("..", import.meta.url).pathname;
const decoder = new TextDecoder();

async function deno(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

Deno.test("client/openapi.json and client/schema.d.ts are what `deno task client` makes from the routes", async () => {
  assert.equal(
    await Deno.readTextFile(documentPath),
    defaultDocumentText(),
    "client/openapi.json is older than the routes: run `deno task client` and commit client/",
  );
  const dir = await Deno.makeTempDir({ prefix: "disbursement-client-" });
  try {
    await generateTypes(documentPath, `${dir}/schema.d.ts`);
    assert.equal(
      await Deno.readTextFile(typesPath),
      await Deno.readTextFile(`${dir}/schema.d.ts`),
      "client/schema.d.ts is not what openapi-typescript makes of client/openapi.json: run `deno task client`",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno check refuses a client call with a wrong path, path parameter, body field or response field", async () => {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-client-" });
  const program = `${dir}/wrong.ts`;
  try {
    await Deno.writeTextFile(
      program,
      `import { v1Client } from "${root}client/mod.ts";
const v1 = v1Client({ baseUrl: "http://127.0.0.1:1", key: "sk_test_x" });
await v1.GET("/v1/disbursement/{id}", { params: { path: { id: "dsb_1" } } });
await v1.GET("/v1/disbursements/{id}", { params: { path: { key: "dsb_1" } } });
await v1.POST("/v1/disbursements", { body: { amount: "12.50", claim_id: "C", payee: { id: "p" } } });
const { data } = await v1.GET("/v1/payees/{id}", { params: { path: { id: "p" } } });
console.log(data?.full_name);
`,
    );
    const checked = await deno(["check", "--config", `${root}deno.json`, program]);
    assert.notEqual(checked.code, 0);
    const lines = (pattern: RegExp) => checked.stderr.split("\n").filter((l) => pattern.test(l));
    assert.equal(lines(/TS\d+ \[ERROR\]/).length, 4, checked.stderr);
    assert.match(checked.stderr, /"\/v1\/disbursement\/\{id\}"/);
    assert.match(checked.stderr, /'key' does not exist/);
    assert.match(checked.stderr, /Type 'string' is not assignable to type 'number'/);
    assert.match(checked.stderr, /Property 'full_name' does not exist/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "client/example.ts type-checks and runs against main.ts --dev: payee, disbursement, read back, verified webhook",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const checked = await deno(["check", "client/example.ts"]);
    assert.equal(checked.code, 0, checked.stderr);

    const dataDir = await Deno.makeTempDir({ prefix: "disbursement-client-" });
    const port = freePort();
    const service = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-cron", `${root}main.ts`, "--dev"],
      env: { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", LOG_FORMAT: "off" },
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          async (res) => (await res.body?.cancel(), res.status === 200),
          () => false,
        );
        if (ready) break;
        assert.ok(Date.now() < deadline, "the dev service is ready within 60 s");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const run = await deno([
        "run",
        "-A",
        "client/example.ts",
        `${dataDir}/sandbox-credentials.json`,
      ]);
      assert.equal(run.code, 0, run.stderr);
      const out = run.stdout.trim().split("\n");
      assert.equal(out.length, 5, run.stdout);
      assert.match(out[0], /^payee example-[0-9a-f]{8} \(201\)$/);
      assert.match(out[1], /^disbursement dsb_\w+ created \$125\.5$/);
      assert.equal(out[2], "read back: created, offered ach, check");
      assert.equal(out[3], "webhook disbursement.created verified");
      // The seeded $1,000,000.00 less the held $125.50 and the highest fee among ACH and check.
      assert.match(out[4], /^\/api balance of auto: available \$99987\d(\.\d{1,2})?$/);
    } finally {
      service.kill("SIGTERM");
      await service.status;
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
