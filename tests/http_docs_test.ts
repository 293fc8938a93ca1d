/**
 * The developer pages: the index at `/`, the errors page generated from the catalogue (an anchor
 * per code, every code the routes answer with documented), the portal help, and the API reference
 * in real Chromium under its CSP, with nothing loaded from another origin.
 */
import { failureReasons } from "../lib/payouts/failure_reasons.ts";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { errorCatalogue, type RefusalCode, refusalError, refusalStatus } from "../routes/errors.ts";
import { withHttpFixture } from "./http_fixture.ts";

const CHROMIUM = "/usr/bin/chromium";

const hrefs = (html: string) => [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
const ids = (html: string) => new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));

Deno.test("GET / is an index of docs, errors, portal help, health and metrics; the inbox only when it is on", async () => {
  await withHttpFixture(async (f) => {
    const res = await f.app.request("/");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Content-Type"), "text/html; charset=UTF-8");
    assert.match(res.headers.get("Content-Security-Policy") ?? "", /^default-src 'none'; /);
    const links = hrefs(await res.text());
    for (
      const href of [
        "/docs",
        "/docs/errors",
        "/docs/portal",
        "/openapi.json",
        "/healthz",
        "/readyz",
        "/metrics",
      ]
    ) {
      assert.ok(links.includes(href), `${href} is linked`);
      const target = await f.app.request(href);
      assert.equal(target.status, 200, `${href} answers`);
      await target.body?.cancel();
    }
    assert.ok(!links.includes("/sandbox/inbox"));
  }, { SANDBOX_INBOX: "0" });
  await withHttpFixture(async (f) => {
    const links = hrefs(await (await f.app.request("/")).text());
    assert.ok(links.includes("/sandbox/inbox"));
  }, { SANDBOX_INBOX: "1" });
});

Deno.test("/docs/errors has an anchor for every catalogued code, and a /v1 problem's type leads to one", async () => {
  await withHttpFixture(async (f) => {
    const page = await f.app.request("/docs/errors");
    assert.equal(page.status, 200);
    const html = await page.text();
    const anchors = ids(html);
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      assert.ok(anchors.has(code), `${code} has an anchor`);
      const shown = entry.meaning.replaceAll("'", "&#39;").split("`")
        .map((part, i) => (i % 2 === 1 ? `<code>${part}</code>` : part)).join("");
      assert.ok(html.includes(shown), `${code} is explained`);
    }
    // Why a payout failed: every code of the one catalogue, with its meaning and next step.
    for (const reason of failureReasons) {
      assert.ok(anchors.has(`failure-${reason.code}`), `${reason.code} has an anchor`);
      const escaped = (text: string) => text.replaceAll("'", "&#39;").replaceAll('"', "&quot;");
      assert.ok(html.includes(escaped(reason.text.en.nextStep)), `${reason.code}'s next step`);
      assert.ok(html.includes(escaped(reason.text.es.meaning)), `${reason.code} in Spanish`);
    }
    const problem = await f.app.request("/v1/disbursements/dsb_missing", {
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(problem.status, 404);
    const { type } = await problem.json();
    assert.equal(type, "/docs/errors#not_found");
    const [path, fragment] = type.split("#");
    assert.equal((await f.app.request(path)).status, 200);
    assert.ok(anchors.has(fragment));
  });
});

Deno.test("every error code the routes answer with is in the catalogue, with the status the route gives it", async () => {
  const sources: string[] = [];
  for await (const file of walk("routes")) {
    // The admin endpoint is loopback-only and outside both surfaces; the portal renders pages.
    if (file.startsWith("routes/admin.ts") || file.startsWith("routes/portal/")) continue;
    sources.push(await Deno.readTextFile(file));
  }
  const literalCodes = new Set(
    sources.flatMap((source) =>
      [...source.matchAll(/\bcode: "([a-z_]+)"/g)].map((match) => match[1])
    ),
  );
  assert.ok(literalCodes.has("not_found") && literalCodes.has("request_timeout"));
  for (const code of literalCodes) {
    assert.ok(Object.hasOwn(errorCatalogue, code), `${code} is answered but not catalogued`);
  }
  const catalogue: Record<string, { status: number }> = errorCatalogue;
  for (const [code, status] of Object.entries(refusalStatus)) {
    const shown = refusalError({ ok: false, code: code as RefusalCode, message: "" }).code;
    assert.equal(catalogue[shown]?.status, status, `${code} is answered ${status} as ${shown}`);
  }
});

Deno.test("/docs/portal names the sandbox routing number and test details", async () => {
  await withHttpFixture(async (f) => {
    const res = await f.app.request("/docs/portal");
    assert.equal(res.status, 200);
    const html = await res.text();
    for (
      const detail of [
        "021000021",
        "000123456789",
        "000111111116",
        "000222222227",
        "4000056655665556",
        "4000000000000002",
        "success+ach",
        "noaction",
      ]
    ) {
      assert.ok(html.includes(detail), `${detail} is on the page`);
    }
  });
});

Deno.test("/docs serves the reference's assets from the npm package, under a CSP of 'self' only", async () => {
  await withHttpFixture(async (f) => {
    const page = await f.app.request("/docs");
    assert.equal(page.status, 200);
    const csp = page.headers.get("Content-Security-Policy") ?? "";
    assert.match(csp, /script-src 'self';/);
    assert.doesNotMatch(csp, /unsafe|https?:/);
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(sources.sort(), [
      "/docs/assets/start.js",
      "/docs/assets/swagger-ui-bundle.js",
      "/docs/assets/swagger-ui.css",
    ]);
    const bundle = await f.app.request("/docs/assets/swagger-ui-bundle.js");
    assert.equal(bundle.status, 200);
    assert.equal(bundle.headers.get("Content-Type"), "text/javascript; charset=utf-8");
    assert.ok((await bundle.text()).length > 500_000);
    const missing = await f.app.request("/docs/assets/index.html");
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), {
      error: { code: "not_found", message: 'no asset "index.html"' },
    });
  });
});

Deno.test({
  name:
    "browser: /docs renders every operation in Chromium with no CSP violation and no other origin",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await withHttpFixture(async (f) => {
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        f.app.fetch,
      );
      const origin = `http://127.0.0.1:${server.addr.port}`;
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
      });
      try {
        const page = await browser.newPage();
        const requests: string[] = [];
        const complaints: string[] = [];
        page.on("request", (request) => requests.push(request.url()));
        page.on("pageerror", (error) => complaints.push(error.message));
        page.on("console", (message) => {
          // The browser asks for /favicon.ico on its own; the service has none.
          if (message.type() === "error" && !/404/.test(message.text())) {
            complaints.push(message.text());
          }
        });
        await page.goto(`${origin}/docs`);
        await page.waitForSelector(".opblock", { timeout: 20_000 });
        const document = await (await f.app.request("/openapi.json")).json() as {
          paths: Record<string, Record<string, unknown>>;
          webhooks: Record<string, unknown>;
        };
        // One block per operation and one per webhook delivery the document describes.
        const operations = Object.values(document.paths)
          .reduce((n, operations) => n + Object.keys(operations).length, 0) +
          Object.keys(document.webhooks).length;
        assert.equal(await page.locator(".opblock").count(), operations);
        assert.deepEqual(complaints, []);
        assert.deepEqual(requests.filter((url) => !url.startsWith(`${origin}/`)), []);
      } finally {
        await browser.close();
        await server.shutdown();
      }
    });
  },
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* walk(path);
    else if (/\.tsx?$/.test(entry.name)) yield path;
  }
}

Deno.test("/docs/errors shows code as code: no literal backticks", async () => {
  await withHttpFixture(async (f) => {
    const page = await (await f.app.request("/docs/errors")).text();
    assert.doesNotMatch(page, /`/);
    assert.match(page, /<code>application\/json<\/code>/);
  });
});

Deno.test("/openapi.json descriptions keep __proto__ and its kin in code spans (Markdown would bold them)", async () => {
  await withHttpFixture(async (f) => {
    const doc = await (await f.app.request("/openapi.json")).json();
    const bare: string[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (node === null || typeof node !== "object") return;
      for (const [key, value] of Object.entries(node)) {
        if ((key === "description" || key === "summary") && typeof value === "string") {
          const outsideCode = value.split("`").filter((_, i) => i % 2 === 0).join(" ");
          bare.push(...(outsideCode.match(/__\w+__/g) ?? []));
        } else walk(value);
      }
    };
    walk(doc);
    assert.deepEqual(bare, []);
  });
});

Deno.test("/docs/contract.md serves the contract in the repository, and the index and the API reference link to it", async () => {
  await withHttpFixture(async (f) => {
    const res = await f.app.request("/docs/contract.md");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Content-Type"), "text/markdown; charset=utf-8");
    const file = await Deno.readTextFile(new URL("../docs/contract.md", import.meta.url));
    assert.equal(await res.text(), file);
    assert.ok(hrefs(await (await f.app.request("/")).text()).includes("/docs/contract.md"));
    const doc = await (await f.app.request("/openapi.json")).json();
    assert.match(doc.info.description, /\/docs\/contract\.md/);
  });
});
