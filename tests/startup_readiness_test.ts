/**
 * Ready means ready, through the real start of the sources (`main.ts`; bundle_test checks the
 * bundle `deno task start` runs the same way): from its first answer until its routes have
 * loaded, the service says 503 `starting` at /readyz while /healthz answers 200; the request sent
 * right after its first /readyz 200 is answered by the API itself; and a SIGTERM stops it at once
 * even while a client keeps its connection open.
 */
import assert from "node:assert/strict";
import { freePort } from "../bench/service.ts";
import { spawnProductionService } from "./helpers.ts";

const START_TIMEOUT_MS = 60_000;
/** Readiness is asked this often, so the start's few hundred milliseconds are seen. */
const POLL_INTERVAL_MS = 2;
const STOP_TIMEOUT_MS = 5_000;

/**
 * Starts the service twice on one DATA_DIR (the first start creates and migrates the databases;
 * the second is the one watched) and watches each start; each is killed after, whatever happened.
 */
async function eachStart(
  start: () => Deno.ChildProcess,
  watch: (child: Deno.ChildProcess, stderr: Promise<string>, watched: boolean) => Promise<void>,
): Promise<void> {
  for (const watched of [false, true]) {
    const child = start();
    const stderr = new Response(child.stderr).text();
    try {
      await watch(child, stderr, watched);
    } finally {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already stopped.
      }
      await child.status;
      await stderr;
    }
  }
}

const environments: { name: string; env: Record<string, string> }[] = [
  { name: "the Node listener (HEADER_TIMEOUT_MS > 0)", env: { HEADER_TIMEOUT_MS: "10000" } },
  { name: "Deno.serve (HEADER_TIMEOUT_MS=0)", env: { HEADER_TIMEOUT_MS: "0" } },
];

for (const { name, env } of environments) {
  Deno.test(`${name}: /readyz is 503 starting until the API answers; SIGTERM stops it with a client connected`, async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "disbursement-readiness-" });
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const start = () => spawnProductionService(dataDir, port, { env });
    try {
      // The first start creates and migrates the databases; the second is the one watched.
      await eachStart(start, async (child, stderr, watched) => {
        const answers: string[] = [];
        const deadline = Date.now() + START_TIMEOUT_MS;
        for (;;) {
          const answer = await fetch(`${base}/readyz`)
            .then(async (res) => `${res.status} ${await res.text()}`)
            .catch(() => null);
          if (answer !== null) answers.push(answer);
          if (answer?.startsWith("200 ")) break;
          if (Date.now() > deadline) assert.fail(`not ready within 60 s: ${await stderr}`);
          await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
        }
        const api = await fetch(`${base}/v1/ledgers/x/balance`);
        assert.equal(api.status, 401, "the API answers right after the first /readyz 200");
        assert.equal(api.headers.get("Content-Type"), "application/problem+json");
        await api.body?.cancel();
        if (watched) {
          const distinct = [...new Set(answers)];
          assert.deepEqual(distinct, [
            '503 {"status":"not_ready","reason":"starting","reasons":["starting"],' +
            '"databases":{"test":"ok","live":"ok"}}',
            '200 {"status":"ready","databases":{"test":"ok","live":"ok"}}',
          ]);
          assert.ok(answers.length >= 2);
        }
        // A probe that reads only the status, as load balancers do; its connection stays open
        // (kept alive by fetch): the stop does not wait for it.
        const probe = await fetch(`${base}/readyz`);
        await probe.body?.cancel();
        assert.equal(probe.status, 200);
        const asked = performance.now();
        child.kill("SIGTERM");
        const stopped = await Promise.race([
          child.status,
          new Promise<null>((resolve) => setTimeout(() => resolve(null), STOP_TIMEOUT_MS)),
        ]);
        assert.ok(
          stopped !== null,
          `SIGTERM did not stop the service within ${STOP_TIMEOUT_MS} ms`,
        );
        if (stopped.code !== 0) assert.fail(`exited with ${stopped.code}: ${await stderr}`);
        assert.ok(performance.now() - asked < STOP_TIMEOUT_MS);
      });
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  });
}

Deno.test("the first API answer, without a key, comes from the core; a request with a key sent at once waits for the API's app and gets its answer, never a 404 or a 5xx", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-core-start-" });
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const start = () => spawnProductionService(dataDir, port);
  const answerOf = async (headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}/v1/ledgers/x/balance`, { headers });
    return `${response.status} ${(await response.json()).detail}`;
  };
  try {
    // The first start creates and migrates the databases; the second is the one watched.
    await eachStart(start, async (child, stderr, watched) => {
      const deadline = Date.now() + START_TIMEOUT_MS;
      let first: string | null = null;
      while (first === null) {
        first = await answerOf().catch(() => null);
        if (Date.now() > deadline) assert.fail(`no answer within 60 s: ${await stderr}`);
        if (first === null) await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
      }
      const keyed = await answerOf({ Authorization: `Bearer sk_test_${"k".repeat(43)}` });
      if (watched) {
        assert.equal(first, "401 a line key is required: Authorization: Bearer sk_…");
        assert.equal(keyed, "401 the line key is not valid", "looked up in the test database");
      }
      const ready = await fetch(`${base}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
      child.kill("SIGTERM");
      const stopped = await child.status;
      if (stopped.code !== 0) assert.fail(`exited with ${stopped.code}: ${await stderr}`);
    });
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("an embedded database that cannot be used stops the service (opened after the listen, or 50 ms after it), before /readyz ever says 200", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-unusable-" });
  const port = freePort();
  try {
    await Deno.writeTextFile(`${dataDir}/test.db`, "not a database, ".repeat(512));
    const child = spawnProductionService(dataDir, port);
    const stderr = new Response(child.stderr).text();
    let exited = false;
    const status = child.status.then((status) => (exited = true, status));
    const answers = new Set<string>();
    while (!exited) {
      for (const path of ["/healthz", "/readyz"]) {
        const answer = await fetch(`http://127.0.0.1:${port}${path}`)
          .then(async (res) => (await res.body?.cancel(), res.status))
          .catch(() => null);
        if (answer !== null) answers.add(`${path} ${answer}`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    }
    const { code } = await status;
    assert.notEqual(code, 0, await stderr);
    assert.match(await stderr, /not a database/);
    assert.ok(!answers.has("/readyz 200"), `answers: ${[...answers]}`);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
