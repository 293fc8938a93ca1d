/** @jsxImportSource hono/jsx */
/**
 * The service's own pages for developers: `GET /` (an index), `/docs` (the interactive API
 * reference of /openapi.json, Swagger UI served from its npm package), `/docs/errors` (every error
 * code, generated from the catalogue in routes/errors.ts) and `/docs/portal` (what a payee does,
 * and the sandbox's test details). Nothing is loaded from another origin: the pages carry a CSP
 * that allows 'self' only.
 */
import { failureReasons } from "../lib/payouts/failure_reasons.ts";
import { Hono } from "hono";
import type { Child } from "hono/jsx";
import { sandboxTestDetails } from "../lib/rails/sandbox.ts";
import { serviceFileUrl } from "../lib/platform/service_files.ts";
import { setDocsSecurityHeaders } from "./docs_headers.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { apiErrorName, errorCatalogue, type ErrorCode, errorResponse } from "./errors.ts";

/** Swagger UI needs data: images (its icons) and same-origin requests (try it out); nothing else. */
/** How long a browser may keep the reference's assets, in seconds (they change with a release). */
const ASSET_MAX_AGE_SECONDS = 86_400;

/** The sandbox ABA routing number the README and the portal help name (any valid one passes). */
export const SANDBOX_ROUTING_NUMBER = "021000021";

const docsCss = `
*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#111;background:#f6f7f9}
header{background:#0b3d91;color:#fff;padding:.75rem 1rem}
header a{color:#fff;font-weight:600;text-decoration:none}
main{max-width:52rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
section.code{background:#fff;border:1px solid #c9ced6;border-radius:.5rem;padding:.25rem 1rem;margin:0 0 1rem}
section.code:target{outline:3px solid #f5a623}
code{font:.95em ui-monospace,monospace;background:#eef0f4;padding:0 .2em;border-radius:.2em}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid #c9ced6;padding:.4rem .6rem;text-align:left;vertical-align:top}
a{color:#0b3d91}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
`;

/** Starts Swagger UI on /openapi.json; a file of its own, because the CSP allows no inline script. */
const swaggerStart = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    defaultModelsExpandDepth: 0
  });
});
`;

type AssetSource = () => Promise<string>;

/** The reference's assets, read from the npm package on first use so that start-up stays fast. */
const assets: Readonly<Record<string, { type: string; source: AssetSource }>> = {
  "swagger-ui-bundle.js": {
    type: "text/javascript; charset=utf-8",
    source: async () =>
      (await import("swagger-ui-dist/swagger-ui-bundle.js", { with: { type: "text" } })).default,
  },
  "swagger-ui.css": {
    type: "text/css; charset=utf-8",
    source: async () =>
      (await import("swagger-ui-dist/swagger-ui.css", { with: { type: "text" } })).default,
  },
  "start.js": {
    type: "text/javascript; charset=utf-8",
    source: () => Promise.resolve(swaggerStart),
  },
  "docs.css": { type: "text/css; charset=utf-8", source: () => Promise.resolve(docsCss) },
};

function Page(props: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title}</title>
        <link rel="stylesheet" href="/docs/assets/docs.css" />
      </head>
      <body>
        <header>
          <a href="/">Disbursement service</a>
        </header>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/** docs/contract.md, read at its first request (deno compile includes it). */
let contractText: Promise<string> | undefined;

function IndexPage(props: { sandboxInbox: boolean }) {
  const links: [string, string, string][] = [
    ["/docs", "API reference", "Every /api and /v1 operation, interactive."],
    ["/docs/errors", "Errors", "Every error code the API answers, what it means and what to do."],
    ["/docs/portal", "Portal help", "What a payee does, and the sandbox's test details."],
    [
      "/docs/contract.md",
      "Contract",
      "The rules the service keeps: states and their ids, events, fees, limits, signatures.",
    ],
    ["/openapi.json", "OpenAPI document", "OpenAPI 3.1, for generated clients."],
    ["/healthz", "Health", "Liveness: 200 while the process runs."],
    ["/readyz", "Readiness", "200 once both databases answer."],
    ["/metrics", "Metrics", "Prometheus text."],
  ];
  if (props.sandboxInbox) {
    links.push(["/sandbox/inbox", "Sandbox inbox", "The e-mails and SMS the sandbox sent."]);
  }
  return (
    <Page title="Disbursement service">
      <h1>Disbursement service</h1>
      <p>
        Pay payees who pick how to be paid. Companies call <code>/api</code> (Surface A) or{" "}
        <code>/v1</code> (Surface B); payees use the portal link they receive.
      </p>
      <ul>
        {links.map(([href, name, what]) => (
          <li>
            <a href={href}>{name}</a> — {what}
          </li>
        ))}
      </ul>
    </Page>
  );
}

/** A catalogue text with its `code` spans as <code>, so no backtick reaches the page. */
function withCode(text: string) {
  return text.split("`").map((part, i) => (i % 2 === 1 ? <code>{part}</code> : part));
}

function ErrorsPage() {
  const codes = Object.entries(errorCatalogue) as [ErrorCode, typeof errorCatalogue[ErrorCode]][];
  return (
    <Page title="Errors — Disbursement service">
      <h1>Errors</h1>
      <p>
        <code>/v1</code> answers errors as RFC 9457 problem details (<code>
          application/problem+json
        </code>) whose <code>type</code> links to a section below and whose <code>code</code>{" "}
        names it; <code>errors[]</code> names each wrong field. <code>/api</code> answers the record
        {" "}
        <code>{"{name, message, details[{Issue, Field, Location}]}"}</code>, whose <code>name</code>
        {" "}
        is given below beside each code.
      </p>
      <table>
        <thead>
          <tr>
            <th>code (/v1)</th>
            <th>status</th>
            <th>name (/api)</th>
          </tr>
        </thead>
        <tbody>
          {codes.map(([code, entry]) => (
            <tr>
              <td>
                <a href={`#${code}`}>
                  <code>{code}</code>
                </a>
              </td>
              <td>{entry.status}</td>
              <td>
                <code>{apiErrorName(code, entry.status)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {codes.map(([code, entry]) => (
        <section class="code" id={code}>
          <h2>
            <code>{code}</code> — {entry.status}
          </h2>
          <p>{withCode(entry.meaning)}</p>
          <p>
            <strong>What to do:</strong> {withCode(entry.remedy)}
          </p>
        </section>
      ))}
      <h2 id="payout-failures">Why a payout failed</h2>
      <p>
        A failed payout's <code>failure_reason</code>{" "}
        (and the console's "Last failure") is one of these codes, or the code its rail reported as
        it is. The payee is told the meaning in their language; the next step is for the company.
      </p>
      <table>
        <thead>
          <tr>
            <th>code</th>
            <th>from</th>
            <th>meaning</th>
            <th>next step</th>
            <th lang="es">significado</th>
          </tr>
        </thead>
        <tbody>
          {failureReasons.map((reason) => (
            <tr id={`failure-${reason.code}`}>
              <td>
                <code>{reason.code}</code>
              </td>
              <td>{reason.source}</td>
              <td>{reason.text.en.meaning}</td>
              <td>{reason.text.en.nextStep}</td>
              <td lang="es">{reason.text.es.meaning}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}

function PortalHelpPage() {
  const t = sandboxTestDetails;
  return (
    <Page title="Portal help — Disbursement service">
      <h1>Portal help</h1>
      <p>
        A payee reaches the portal through the link sent by e-mail or SMS (or the landing page of a
        {" "}
        <code>/v1</code> disbursement's{" "}
        <code>payee_url</code>, which sends a fresh one). There they:
      </p>
      <ol>
        <li>enter the one-time code sent to their channel;</li>
        <li>read and sign the documents that ask for a signature;</li>
        <li>
          when the company asked for endorsements, confirm each authorization party, who endorses
          through a link of their own;
        </li>
        <li>choose how to be paid and enter the details;</li>
        <li>follow the payment on the status page until it completes.</li>
      </ol>
      <h2>Sandbox test details</h2>
      <table>
        <tbody>
          <tr>
            <th>ACH routing number</th>
            <td>
              <code>{SANDBOX_ROUTING_NUMBER}</code> (any number with a valid ABA checksum passes)
            </td>
          </tr>
          <tr>
            <th>ACH account that settles</th>
            <td>
              <code>{t.achSettles}</code>
            </td>
          </tr>
          <tr>
            <th>ACH account returned R03</th>
            <td>
              <code>{t.achReturnsR03}</code> (the payee is asked to choose again)
            </td>
          </tr>
          <tr>
            <th>ACH account returned after it completed</th>
            <td>
              <code>{t.achReturnsLate}</code>{" "}
              (completes, then comes back R02 three banking days later: a late return, owed to the
              payee as unclaimed property)
            </td>
          </tr>
          <tr>
            <th>ACH account that fails once</th>
            <td>
              <code>{t.achTransientOnce}</code>{" "}
              (a transient rail error; the automatic retry settles)
            </td>
          </tr>
          <tr>
            <th>Card that succeeds</th>
            <td>
              <code>{t.cardSucceeds}</code>
            </td>
          </tr>
          <tr>
            <th>Card that is declined</th>
            <td>
              <code>{t.cardDeclined}</code>
            </td>
          </tr>
          <tr>
            <th>Debit card no network can push to</th>
            <td>
              <code>{t.cardNotPushable}</code>{" "}
              (instant deposit: not eligible, chosen again; instant deposit cards are typed at the
              sandbox's hosted card field, /sandbox/increase/card)
            </td>
          </tr>
          <tr>
            <th>Bank that cannot take an instant bank payment</th>
            <td>
              <code>{t.rtpUnreachableRouting}</code> (instant deposit to a bank account: refused)
            </td>
          </tr>
          <tr>
            <th>Check ZIP returned undeliverable</th>
            <td>
              <code>{t.checkUndeliverableZip}</code>
            </td>
          </tr>
          <tr>
            <th>PayPal and Venmo receivers</th>
            <td>
              Venmo phone <code>{t.venmoUnregisteredPhone}</code> or a PayPal e-mail{" "}
              <code>fail+paypal@…</code>{" "}
              has no account (<code>RECEIVER_UNREGISTERED</code>); Venmo phone{" "}
              <code>{t.venmoUnclaimedPhone}</code> or a PayPal e-mail <code>unclaimed@…</code>{" "}
              stays unclaimed and is returned after 30 days; Venmo phone{" "}
              <code>{t.venmoRefundedPhone}</code> or a PayPal e-mail <code>refunded@…</code>{" "}
              completes and is refunded 3 days later (a late return); Venmo phone{" "}
              <code>{t.venmoHeldPhone}</code> or a PayPal e-mail <code>held@…</code>{" "}
              is held by PayPal for a day, then completes; Venmo phone{" "}
              <code>{t.venmoBlockedPhone}</code> or <code>blocked@…</code>{" "}
              is blocked for good; Venmo phone <code>{t.venmoDeniedPhone}</code> or{" "}
              <code>denied@…</code>{" "}
              has PayPal deny the whole batch it goes in (every payout of it fails)
            </td>
          </tr>
          <tr>
            <th>Test payees</th>
            <td>
              An e-mail local part (<code>/api</code>) or payee id (<code>/v1</code>) of{" "}
              <code>success+ach</code> selects that method at once and completes;{" "}
              <code>fail+venmo</code> selects it and fails with the method's typical reason;{" "}
              <code>noaction</code> never acts.
            </td>
          </tr>
        </tbody>
      </table>
    </Page>
  );
}

export function docsRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const html = (page: Child) => "<!doctype html>" + String(page);
  // Mounted at the root, this runs around every route: a route's own policy (the portal's) stays.
  // Set on the answer's own headers: c.header() after the route would build a new Response for
  // each header, three per request (issue 33).
  app.use(async (c, next) => {
    await next();
    setDocsSecurityHeaders(c.res.headers);
  });

  app.get("/", (c) => c.html(html(<IndexPage sandboxInbox={deps.config.sandboxInbox} />)));

  app.get("/docs", (c) =>
    c.html(html(
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>API reference — Disbursement service</title>
          <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
        </head>
        <body>
          <div id="swagger-ui"></div>
          <script src="/docs/assets/swagger-ui-bundle.js"></script>
          <script src="/docs/assets/start.js"></script>
        </body>
      </html>,
    )));

  app.get("/docs/errors", (c) => c.html(html(<ErrorsPage />)));
  // The contract the document and the error pages cite, as the repository holds it (Markdown).
  app.get("/docs/contract.md", async (c) => {
    contractText ??= Deno.readTextFile(serviceFileUrl("docs/contract.md"));
    c.header("Content-Type", "text/markdown; charset=utf-8");
    return c.body(await contractText);
  });
  app.get("/docs/portal", (c) => c.html(html(<PortalHelpPage />)));

  app.get("/docs/assets/:name", async (c) => {
    const name = c.req.param("name");
    const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (!asset) {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: `no asset ${JSON.stringify(name)}`,
      });
    }
    // The module loader keeps what it read: the package is read once per process.
    const body = await asset.source();
    c.header("Content-Type", asset.type);
    c.header("Cache-Control", `public, max-age=${ASSET_MAX_AGE_SECONDS}`);
    return c.body(body);
  });
  return app;
}
