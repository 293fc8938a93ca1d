/** @jsxImportSource hono/jsx */
/**
 * What every console page is built from: the frame (navigation, environment switch, the test-mode
 * banner, sign-out), forms that carry the CSRF token and keep what was typed, tables that sort and
 * page on the server, empty states, amounts and times. Server-rendered, working without script;
 * hono/jsx escapes every value it renders.
 */
import type { MiddlewareHandler } from "hono";
import type { Child } from "hono/jsx";
import type { Role } from "../../lib/operators/rules.ts";
import type { Environment } from "../../lib/platform/config.ts";
import { formatDateTime, formatUtc } from "../../lib/platform/format.ts";
import { formatDollars } from "../../lib/platform/money.ts";
import { type ConsoleContext, type ConsoleEnv, hasRole, roleGate } from "./session.ts";

/** One entry of the navigation: every page of the console, in the order of issue 20's table. */
export interface ConsolePage {
  readonly key: string;
  readonly href: string;
  readonly label: string;
  /** Shown only in the test environment (the sandbox). */
  readonly testOnly?: boolean;
  /** The least role that sees it in the navigation. */
  readonly role?: Role;
}

export const CONSOLE_PAGES: readonly ConsolePage[] = [
  { key: "overview", href: "/console", label: "Overview" },
  { key: "needs-action", href: "/console/needs-action", label: "Needs action" },
  { key: "payouts", href: "/console/payouts", label: "Payouts" },
  { key: "disbursements", href: "/console/disbursements", label: "Disbursements" },
  { key: "ledger", href: "/console/ledger", label: "Ledger" },
  { key: "reconciliation", href: "/console/reconciliation", label: "Reconciliation" },
  { key: "unclaimed", href: "/console/unclaimed", label: "Unclaimed" },
  { key: "funding", href: "/console/funding", label: "Funding" },
  { key: "webhooks", href: "/console/webhooks", label: "Webhooks" },
  { key: "jobs", href: "/console/jobs", label: "Jobs" },
  { key: "approvals", href: "/console/approvals", label: "Approvals" },
  { key: "audit", href: "/console/audit", label: "Audit" },
  { key: "reviews", href: "/console/reviews", label: "Reviews" },
  { key: "keys", href: "/console/keys", label: "Keys" },
  { key: "bank-files", href: "/console/bank-files", label: "Bank files" },
  { key: "sandbox", href: "/console/sandbox", label: "Sandbox", testOnly: true },
];

/** Payment methods as the payments team says them, by method id. */
export const METHOD_LABELS: Readonly<Record<number, string>> = {
  1: "ACH",
  2: "Check",
  3: "Virtual card",
  4: "Instant deposit",
  5: "Digital check",
  6: "Venmo",
  7: "PayPal",
};

/** A method and the account's last four, when known: "ACH ending in 6789". */
export function methodLabel(methodId: number | null, lastFour: string | null): string {
  if (methodId === null) return "—";
  const name = METHOD_LABELS[methodId] ?? `method ${methodId}`;
  return lastFour ? `${name} ending in ${lastFour}` : name;
}

export const consoleCss = `
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#111;background:#f5f6f8}
a{color:#0a4aa8}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem}
.skip:focus{left:.5rem;z-index:10}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.banner-test{background:#ffd24d;color:#111;font-weight:700;text-align:center;padding:.35rem .75rem;border-bottom:2px solid #b38600}
header.top{background:#14213d;color:#fff;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.5rem 1rem}
header.top a{color:#fff}
header.top .brand{font-weight:700;margin:0;font-size:1rem}
header.top .who{margin-left:auto;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;font-size:.9rem}
header.top form{margin:0}
.env-switch{display:flex;border:1px solid #fff;border-radius:.3rem;overflow:hidden}
.env-switch a{padding:.15rem .6rem;text-decoration:none}
.env-switch a[aria-current]{background:#fff;color:#14213d;font-weight:700}
/* The tab bar scrolls on a small screen: a shadow at an edge says more tabs are that way. */
nav.pages{border-bottom:1px solid #d0d5dd;overflow-x:auto;background:linear-gradient(to right,#fff 30%,rgba(255,255,255,0)),linear-gradient(to left,#fff 30%,rgba(255,255,255,0)) 100% 0,radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.3),rgba(0,0,0,0)),radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.3),rgba(0,0,0,0)) 100% 0;background-color:#fff;background-repeat:no-repeat;background-size:2.5rem 100%,2.5rem 100%,.9rem 100%,.9rem 100%;background-attachment:local,local,scroll,scroll}
nav.pages ul{list-style:none;margin:0;padding:0 .5rem;display:flex;gap:.1rem;white-space:nowrap}
nav.pages a{display:block;padding:.55rem .6rem;text-decoration:none;color:#222;border-bottom:3px solid transparent}
nav.pages a[aria-current]{border-bottom-color:#0a4aa8;color:#0a4aa8;font-weight:600}
main{max-width:78rem;margin:0 auto;padding:1rem}
h1{font-size:1.4rem;margin:.25rem 0 1rem;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.card{background:#fff;border:1px solid #d0d5dd;border-radius:.45rem;padding:1rem;margin:0 0 1rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1rem}
.table-wrap{overflow-x:auto;background:#fff;border:1px solid #d0d5dd;border-radius:.45rem}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{padding:.45rem .6rem;text-align:left;border-bottom:1px solid #e4e7ec;vertical-align:top}
th{background:#f0f2f5;font-weight:600;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
th a{color:inherit}
.money{font-variant-numeric:tabular-nums;white-space:nowrap}
.money.negative{color:#a3001a}
.empty{background:#fff;border:1px dashed #9aa3b2;border-radius:.45rem;padding:1rem;color:#333}
.pager{display:flex;gap:1rem;align-items:center;margin:.75rem 0}
form.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.5rem 1rem;align-items:end;background:#fff;border:1px solid #d0d5dd;border-radius:.45rem;padding:.75rem 1rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:.5rem 0 .2rem}
.hint{display:block;font-weight:400;color:#444;font-size:.85rem}
.reason{display:block}
.next-step{display:block;color:#444}
ul.chips{padding:0;list-style:none}
input[type=text],input[type=email],input[type=password],input[type=search],input[type=date],input[type=number],input[type=datetime-local],select,textarea{width:100%;font:inherit;padding:.45rem;border:1px solid #5b6472;border-radius:.3rem;background:#fff;color:#111}
input[aria-invalid=true],select[aria-invalid=true],textarea[aria-invalid=true]{border:2px solid #a3001a}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:.45rem .9rem;border:1px solid #0a4aa8;border-radius:.3rem;background:#0a4aa8;color:#fff;cursor:pointer;text-decoration:none}
button.secondary{background:#fff;color:#0a4aa8}
button.danger{background:#a3001a;border-color:#a3001a;color:#fff}
header.top button{background:transparent;border-color:#fff}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}
.actions form{margin:0}
.error{color:#a3001a;font-weight:600}
.errors{border:2px solid #a3001a;border-radius:.4rem;padding:.5rem 1rem;background:#fff5f5;margin:0 0 1rem}
.notice{border-left:4px solid #0a4aa8;padding:.5rem 1rem;background:#eaf1fb;margin:0 0 1rem}
.attention{border-left:4px solid #b35900;background:#fff6ea}
.badge{display:inline-block;padding:0 .45rem;border-radius:1rem;background:#e4e7ec;font-size:.82rem;white-space:nowrap}
.badge.bad{background:#fde2e4;color:#7a0012}
.badge.good{background:#dff3e4;color:#0d5224}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}
dl.facts dt{font-weight:600;color:#333}
dl.facts dd{margin:0;min-width:0;overflow-wrap:anywhere}
.secret{font-family:ui-monospace,monospace;background:#f0f2f5;padding:.4rem;border-radius:.3rem;word-break:break-all}
svg.chart{max-width:100%;height:auto}
footer{max-width:78rem;margin:0 auto;padding:1rem;color:#444;font-size:.85rem}
@media (max-width:40rem){main{padding:.6rem}th,td{padding:.35rem .4rem}header.top .who{margin-left:0}}
.pre-wrap{white-space:pre-wrap}
.spaced{margin:0 0 1rem}
.plain-list{padding:0}
.plain-list>li{list-style:none}
.tight-list{margin:0;padding-left:1rem}
.break-all{word-break:break-all}
caption.hint{text-align:left;padding:.4rem .6rem}
main.narrow{max-width:28rem}
.qr{max-width:14rem}
`;

/**
 * Progressive enhancement only: tells the server the browser's time zone once (a cookie read by
 * session.ts), and asks before a form marked data-confirm is sent. Every page works without it.
 */
export const consoleJs = `
(function(){
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && document.cookie.indexOf("console_tz=") === -1) {
      document.cookie = "console_tz=" + encodeURIComponent(zone) + "; path=/console; max-age=31536000; samesite=strict";
      if (zone !== "UTC" && document.documentElement.getAttribute("data-tz") === "UTC") location.reload();
    }
  } catch (e) {}
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });
})();
`;

/** A console address in the page's environment, with query parameters (empty ones left out). */
export function consoleUrl(
  c: ConsoleContext,
  path: string,
  query: Readonly<Record<string, string | number | null | undefined>> = {},
): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== null && value !== undefined && value !== "") params.set(name, String(value));
  }
  params.set("env", c.get("environment"));
  return `${path}?${params.toString()}`;
}

/** The current page's address with some query parameters changed (null removes one). */
export function currentUrlWith(
  c: ConsoleContext,
  changes: Readonly<Record<string, string | number | null>>,
): string {
  const query: Record<string, string | number | null> = { ...c.req.query() };
  Object.assign(query, changes);
  return consoleUrl(c, c.req.path, query);
}

export function ConsoleLayout(props: {
  c: ConsoleContext;
  title: string;
  /** The key of the navigation entry this page belongs to. */
  active: string;
  children: Child;
}) {
  const { c } = props;
  const operator = c.get("operator");
  const environment = c.get("environment");
  const pages = CONSOLE_PAGES.filter((page) =>
    (!page.testOnly || environment === "test") && (!page.role || hasRole(c, page.role))
  );
  const activePage = CONSOLE_PAGES.find((page) => page.key === props.active);
  const switchTo = (target: Environment) =>
    `${
      activePage && (!activePage.testOnly || target === "test") ? activePage.href : "/console"
    }?env=${target}`;
  return (
    <html lang="en" data-tz={c.get("timeZone")}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${props.title} · ${environment === "test" ? "Test" : "Live"} · Console`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        {environment === "test"
          ? (
            <div class="banner-test" role="note" id="test-banner">
              Test mode: sandbox data, no real money moves.
            </div>
          )
          : null}
        <header class="top">
          <p class="brand">Disbursements console</p>
          <nav class="env-switch" aria-label="Environment">
            <a href={switchTo("test")} aria-current={environment === "test" ? "page" : undefined}>
              Test
            </a>
            <a href={switchTo("live")} aria-current={environment === "live" ? "page" : undefined}>
              Live
            </a>
          </nav>
          <div class="who">
            <span>
              {operator.email} ({operator.role})
            </span>
            <form method="post" action="/console/sign-out">
              <CsrfField c={c} />
              <button type="submit">Sign out</button>
            </form>
          </div>
        </header>
        <nav class="pages" aria-label="Console pages">
          <ul>
            {pages.map((page) => (
              <li>
                <a
                  href={`${page.href}?env=${environment}`}
                  aria-current={page.key === props.active ? "page" : undefined}
                >
                  {page.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main">
          <h1>{props.title}</h1>
          {props.children}
        </main>
        <footer>
          Times in {c.get("timeZone")}; hover a time for UTC. {environment === "live"
            ? "Live environment: changes move real money and are audited."
            : "Test environment."}
        </footer>
      </body>
    </html>
  );
}

/** The hidden fields every state-changing form carries: the CSRF token and the environment. */
export function CsrfField(props: { c: ConsoleContext }) {
  return (
    <>
      <input type="hidden" name="csrf" value={props.c.get("csrfToken")} />
      <input type="hidden" name="env" value={props.c.get("environment")} />
    </>
  );
}

/** An amount as every surface writes it ("$1,250.00"). */
export function Money(props: { cents: number }) {
  return (
    <span class={props.cents < 0 ? "money negative" : "money"}>{formatDollars(props.cents)}</span>
  );
}

/** A moment in the operator's time zone, UTC on hover; "—" when there is none. */
export function When(props: { c: ConsoleContext; at: number | null | undefined }) {
  if (props.at === null || props.at === undefined) return <span>—</span>;
  return (
    <time datetime={new Date(props.at).toISOString()} title={formatUtc(props.at)}>
      {formatDateTime(props.at, props.c.get("timeZone"))}
    </time>
  );
}

/** What a list says when it has nothing: what it would show and what to do about it. */
export function EmptyState(props: { children: Child }) {
  return <div class="empty" role="status">{props.children}</div>;
}

/** A message after an action, announced to screen readers. */
export function Notice(props: { children: Child; attention?: boolean }) {
  return (
    <div class={props.attention ? "notice attention" : "notice"} role="status">
      {props.children}
    </div>
  );
}

/** A problem with one field of a form, or with the form as a whole (field "form"). */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

/** Problems listed at the top of a form (announced), each linking to its field. */
export function FormProblems(props: { problems: readonly FieldProblem[] }) {
  if (props.problems.length === 0) return null;
  return (
    <div class="errors" role="alert" id="problems">
      <p class="error">This was not done:</p>
      <ul>
        {props.problems.map((p) => (
          <li>{p.field === "form" ? p.message : <a href={`#${p.field}`}>{p.message}</a>}</li>
        ))}
      </ul>
    </div>
  );
}

/** The string fields of a parsed form body: what a form shows again after an error. */
export type FormValues = Readonly<Record<string, string>>;

export function formValuesOf(body: Readonly<Record<string, unknown>>): FormValues {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === "string" && name !== "csrf") values[name] = value;
  }
  return values;
}

/** A labelled input that shows what was typed and its problem, tied to it for screen readers. */
export function Field(props: {
  name: string;
  label: string;
  values?: FormValues;
  problems?: readonly FieldProblem[];
  type?: "text" | "email" | "password" | "search" | "date" | "number" | "datetime-local";
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  inputmode?: "numeric" | "decimal" | "text" | "email";
}) {
  const problem = props.problems?.find((p) => p.field === props.name);
  const describedBy = [props.hint ? `${props.name}-hint` : "", problem ? `${props.name}-error` : ""]
    .filter(Boolean).join(" ");
  return (
    <div>
      <label for={props.name}>
        {props.label}
        {props.hint ? <span class="hint" id={`${props.name}-hint`}>{props.hint}</span> : null}
      </label>
      {problem ? <p class="error" id={`${props.name}-error`}>{problem.message}</p> : null}
      <input
        type={props.type ?? "text"}
        id={props.name}
        name={props.name}
        value={props.type === "password" ? "" : props.values?.[props.name] ?? ""}
        required={props.required}
        autocomplete={props.autocomplete ?? "off"}
        inputmode={props.inputmode}
        aria-invalid={problem ? "true" : undefined}
        aria-describedby={describedBy || undefined}
      />
    </div>
  );
}

/** A labelled select keeping the chosen option; the first option is "any" when `any` is given. */
export function SelectField(props: {
  name: string;
  label: string;
  options: readonly { value: string; label: string }[];
  values?: FormValues;
  problems?: readonly FieldProblem[];
  any?: string;
}) {
  const problem = props.problems?.find((p) => p.field === props.name);
  const chosen = props.values?.[props.name] ?? "";
  return (
    <div>
      <label for={props.name}>{props.label}</label>
      {problem ? <p class="error" id={`${props.name}-error`}>{problem.message}</p> : null}
      <select
        id={props.name}
        name={props.name}
        aria-invalid={problem ? "true" : undefined}
        aria-describedby={problem ? `${props.name}-error` : undefined}
      >
        {props.any !== undefined ? <option value="">{props.any}</option> : null}
        {props.options.map((option) => (
          <option value={option.value} selected={option.value === chosen}>{option.label}</option>
        ))}
      </select>
    </div>
  );
}

/** A table's server-side order and page, read from `sort`, `dir` and `page` of the query. */
export interface ListParams {
  readonly sort: string;
  readonly direction: "asc" | "desc";
  readonly page: number;
  readonly limit: number;
  readonly offset: number;
}

/** Rows one table page shows unless the page says otherwise. */
export const CONSOLE_PAGE_SIZE_ROWS = 50;
/** Pages past this are refused to the first: deep offsets cost a scan for nobody. */
const CONSOLE_PAGE_MAX = 10_000;

/** The order and page a request asks for; an unknown column falls back to the default. */
export function listParams(
  c: ConsoleContext,
  options: {
    sorts: readonly string[];
    defaultSort: string;
    defaultDirection?: "asc" | "desc";
    pageSize?: number;
  },
): ListParams {
  const sortAsked = c.req.query("sort") ?? "";
  const sort = options.sorts.includes(sortAsked) ? sortAsked : options.defaultSort;
  const dirAsked = c.req.query("dir");
  const direction = dirAsked === "asc" || dirAsked === "desc"
    ? dirAsked
    : options.defaultDirection ?? "desc";
  const pageAsked = Number(c.req.query("page") ?? "1");
  const page = Number.isSafeInteger(pageAsked) && pageAsked >= 1 && pageAsked <= CONSOLE_PAGE_MAX
    ? pageAsked
    : 1;
  const limit = options.pageSize ?? CONSOLE_PAGE_SIZE_ROWS;
  return { sort, direction, page, limit, offset: (page - 1) * limit };
}

/** A column header that sorts the table on the server; aria-sort says the current order. */
export function SortHeader(props: {
  c: ConsoleContext;
  params: ListParams;
  column: string;
  label: string;
  numeric?: boolean;
}) {
  const current = props.params.sort === props.column;
  const next = current && props.params.direction === "desc" ? "asc" : "desc";
  return (
    <th
      scope="col"
      class={props.numeric ? "num" : undefined}
      aria-sort={current
        ? (props.params.direction === "asc" ? "ascending" : "descending")
        : undefined}
    >
      <a href={currentUrlWith(props.c, { sort: props.column, dir: next, page: null })}>
        {props.label}
        {current ? (props.params.direction === "asc" ? " ▲" : " ▼") : ""}
      </a>
    </th>
  );
}

/** Previous and next page links; `hasMore` from fetching one row more than the page shows. */
export function Pager(props: { c: ConsoleContext; params: ListParams; hasMore: boolean }) {
  const { page } = props.params;
  if (page === 1 && !props.hasMore) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {page > 1
        ? <a href={currentUrlWith(props.c, { page: page - 1 })} rel="prev">Previous page</a>
        : null}
      <span>Page {page}</span>
      {props.hasMore
        ? <a href={currentUrlWith(props.c, { page: page + 1 })} rel="next">Next page</a>
        : null}
    </nav>
  );
}

/** The HTTP status of a refusal code of a service or command. */
export function refusalStatus(code: string): 400 | 403 | 404 | 409 {
  if (code === "usage" || code === "invalid_input" || code === "weak_password") return 400;
  if (
    code === "role_insufficient" || code === "operator_scoped" || code === "totp_required" ||
    code === "session_required" || code === "session_invalid" || code === "session_expired"
  ) return 403;
  if (code.endsWith("_not_found")) return 404;
  return 409;
}

/** A refusal in the console's frame (the sign-in page's frame before a session is known). */
export function refusalPage(c: ConsoleContext, status: 400 | 403 | 404 | 409, message: string) {
  const titles = { 400: "Not accepted", 403: "Not allowed", 404: "Not found", 409: "Not done" };
  if (!c.get("operator")) {
    return c.html(
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <title>{titles[status]}</title>
          <link rel="stylesheet" href="/console/assets/console.css" />
        </head>
        <body>
          <main id="main">
            <h1>{titles[status]}</h1>
            <p>{message}</p>
          </main>
        </body>
      </html>,
      status,
    );
  }
  return c.html(
    <ConsoleLayout c={c} title={titles[status]} active="">
      <p class="error" role="alert">{message}</p>
      <p>
        <a href={consoleUrl(c, "/console")}>Back to the overview</a>
      </p>
    </ConsoleLayout>,
    status,
  );
}

/**
 * What an object outside the operator's companies answers, and a missing one too: the same 404,
 * so an id in the URL tells nothing about another company.
 */
export function notFoundPage(c: ConsoleContext, what = "This page") {
  return refusalPage(c, 404, `${what} does not exist, or is not in your companies.`);
}

/** Refuses (403 in the console's frame, nothing read or written) a role below `role`. */
export function requireRole(role: Role): MiddlewareHandler<ConsoleEnv> {
  return roleGate(role, refusalPage);
}
