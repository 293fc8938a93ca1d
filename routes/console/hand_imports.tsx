/** @jsxImportSource hono/jsx */
/**
 * A file from the bank imported by hand (an ACH return or notice-of-change file, a check paid-items
 * CSV, or a bank statement in BAI2 or camt.053): an admin uploads it here and the console runs the
 * CLI's own command on it (ach:import, checks:import-paid or recon:import), with its checks and
 * audit rows, recorded as the console's import. In live the command stages
 * the file and this page shows what it would apply while it waits for a second admin on the
 * Approvals page; in test it is imported at once and the page shows the report.
 */
import { Hono } from "hono";
import type { Child } from "hono/jsx";
import * as v from "valibot";
import { scopedCompanies } from "../../lib/console/companies.ts";
import type { AppDeps } from "../context.ts";
import { issuePath } from "../validation.ts";
import {
  ConsoleLayout,
  consoleUrl,
  CsrfField,
  type FieldProblem,
  FormProblems,
  type FormValues,
  Money,
  Notice,
  requireRole,
  SelectField,
} from "./kit.tsx";
import { refusalProblems, statusOf } from "./page_parts.tsx";
import { BankTabs } from "./bank_files.tsx";
import {
  companiesInScope,
  type ConsoleContext,
  type ConsoleEnv,
  runConsoleCommand,
} from "./session.ts";

const KINDS = {
  ach_return: "ACH return or notice-of-change file",
  check_paid: "Check paid-items file (CSV)",
  statement: "Bank statement (BAI2 or camt.053)",
} as const;
type Kind = keyof typeof KINDS;

/** The CLI command each kind of file runs, and what its company is asked as, if it needs one. */
const COMMANDS: Readonly<Record<Kind, { command: string; company: string | null }>> = {
  ach_return: { command: "ach:import", company: null },
  check_paid: {
    command: "checks:import-paid",
    company: "Company: choose the company whose checks were paid",
  },
  statement: {
    command: "recon:import",
    company: "Company: choose the company whose accounts the statement reports",
  },
};

/** A name fit for a file of ours: the upload's own, without a path or odd characters. */
const FILE_NAME_LENGTH_MAX = 100;

const uploadForm = v.object({
  kind: v.picklist(Object.keys(KINDS) as Kind[], "Kind: choose the kind of file"),
  company: v.optional(v.string(), ""),
  file: v.pipe(
    v.instance(File, "File: choose the file to import"),
    v.check((file) => file.size > 0, "File: the file is empty"),
  ),
});

function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const cleaned = base.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  return cleaned.slice(0, FILE_NAME_LENGTH_MAX) || "upload";
}

async function importPage(
  c: ConsoleContext,
  form: { problems: readonly FieldProblem[]; values: FormValues },
) {
  const companies = await scopedCompanies(c.get("database").readClient, companiesInScope(c));
  const live = c.get("environment") === "live";
  return (
    <ConsoleLayout c={c} title="Import a bank file" active="bank-files">
      <BankTabs c={c} current="import" />
      <p>
        {live
          ? "In live, the file is staged: this page shows what it would apply, and a second admin approves it on the Approvals page before anything changes. Files fetched from the bank's SFTP are applied as they arrive."
          : "In test, the file is imported at once."}{" "}
        Each file is imported once (by its SHA-256); a file that cannot be read is refused whole
        with its line and reason. The CLI does the same with <code>ach:import</code>,{" "}
        <code>checks:import-paid</code> and <code>recon:import</code>.
      </p>
      <FormProblems problems={form.problems} />
      <form
        method="post"
        action="/console/bank-files/import"
        enctype="multipart/form-data"
        class="card"
      >
        <CsrfField c={c} />
        <input type="hidden" name="env" value={c.get("environment")} />
        <SelectField
          name="kind"
          label="Kind"
          options={Object.entries(KINDS).map(([value, label]) => ({ value, label }))}
          values={form.values}
          problems={form.problems}
        />
        <SelectField
          name="company"
          label="Company (paid items and statements)"
          any="—"
          options={companies.map((company) => ({
            value: company.id,
            label: `${company.name} (${company.tin})`,
          }))}
          values={form.values}
          problems={form.problems}
        />
        <div>
          <label for="file">File</label>
          {form.problems.some((p) => p.field === "file")
            ? (
              <p class="error" id="file-error">
                {form.problems.find((p) => p.field === "file")!.message}
              </p>
            )
            : null}
          <input type="file" id="file" name="file" required />
        </div>
        <div>
          <button type="submit">{live ? "Stage for a second admin" : "Import"}</button>
        </div>
      </form>
    </ConsoleLayout>
  );
}

type Answer = Readonly<Record<string, unknown>>;

const count = (value: unknown) => Array.isArray(value) ? value.length : Number(value ?? 0);

/** A term and its list of facts, each one line, or "none". */
function FactList(props: { term: string; items: readonly Child[] }) {
  return (
    <>
      <dt>{props.term}</dt>
      <dd>
        {props.items.length === 0
          ? "none"
          : <ul class="tight-list">{props.items.map((item) => <li key={item}>{item}</li>)}</ul>}
      </dd>
    </>
  );
}

/** What a file did (test) or would do (live), in the command's own words. */
function ImportFacts(props: { c: ConsoleContext; facts: Answer }) {
  const { facts } = props;
  const list = (key: string) => (facts[key] ?? []) as Answer[];
  const statement = facts.format !== undefined;
  const row = (label: string, key: string, shown: (value: unknown) => unknown = String) =>
    facts[key] === undefined ? null : (
      <>
        <dt>{label}</dt>
        <dd>{shown(facts[key])}</dd>
      </>
    );
  return (
    <section class="card" aria-label="Import">
      <dl class="facts">
        {row("File", "file_name")}
        {row("SHA-256", "sha256")}
        {row("Imported before", "duplicate", (value) => value ? "yes: it changes nothing" : "no")}
        {row("Returns", "returns", count)}
        {row("Notices of change", "corrections", count)}
        {row("Entries matched", "entries_matched")}
        {row("Entries applied", "applied")}
        {row("Items", "items")}
        {row("Items matched", "items_matched")}
        {row("Format", "format")}
        {statement
          ? (
            <FactList
              term="Account days"
              items={list("days").map((day) =>
                `${day.account} ${day.date}: ${day.lines} lines, ${day.matched} matched, ${day.exceptions} exceptions`
              )}
            />
          )
          : null}
        {row(statement ? "Lines matched" : "Items matched", "matched")}
        {row("Exceptions", "exceptions")}
        {row("Money moved", "money_moved_cents", (cents) => <Money cents={Number(cents)} />)}
        {facts.payouts_affected === undefined ? null : (
          <FactList
            term="Payouts affected"
            items={(facts.payouts_affected as string[]).map((id) => (
              <a href={consoleUrl(props.c, `/console/payouts/${id}`)}>{id}</a>
            ))}
          />
        )}
        {row("Fundings affected", "fundings_affected", (ids) => count(ids))}
        {statement
          ? (
            <FactList
              term="Not read"
              items={list("not_read").map((day) => `${day.account} ${day.date}: ${day.reason}`)}
            />
          )
          : (
            <FactList
              term="Not applied"
              items={((facts.not_applied ?? facts.not_matched ?? []) as Answer[]).map((
                entry,
              ) =>
                `${String(entry.trace ?? entry.check_number ?? entry.line ?? "?")}: ${
                  String(entry.reason ?? "")
                } ${entry.message ? String(entry.message) : ""}`
              )}
            />
          )}
      </dl>
    </section>
  );
}

function resultPage(c: ConsoleContext, answer: Answer) {
  const staged = typeof answer.approval_id === "string";
  return (
    <ConsoleLayout c={c} title="Import a bank file" active="bank-files">
      <BankTabs c={c} current="import" />
      {staged
        ? (
          <Notice>
            Staged: {String(answer.summary)}. A second admin decides{" "}
            <a href={consoleUrl(c, `/console/approvals/${answer.approval_id}`)}>
              approval {String(answer.approval_id)}
            </a>{" "}
            before anything is applied.
          </Notice>
        )
        : <Notice>Imported in {String(answer.environment)}.</Notice>}
      <ImportFacts c={c} facts={(staged ? answer.would_apply : answer) as Answer} />
      <p>
        <a href={consoleUrl(c, "/console/bank-files/import")}>Import another file</a>
      </p>
    </ConsoleLayout>
  );
}

export function handImportConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get(
    "/bank-files/import",
    requireRole("admin"),
    async (c) => c.html(await importPage(c, { problems: [], values: { kind: "ach_return" } })),
  );
  app.post("/bank-files/import", requireRole("admin"), async (c) => {
    const body = await c.req.parseBody();
    const values: FormValues = {
      kind: typeof body.kind === "string" ? body.kind : "",
      company: typeof body.company === "string" ? body.company : "",
    };
    const again = async (problems: FieldProblem[], status: 400 | 403 | 404 | 409) =>
      c.html(await importPage(c, { problems, values }), status);
    // A form sent without a file has no such key: it is refused as the file field's problem.
    const parsed = v.safeParse(uploadForm, { ...body, file: body.file ?? "" });
    if (!parsed.success) {
      return again(
        parsed.issues.map((issue) => ({ field: issuePath(issue), message: issue.message })),
        400,
      );
    }
    const { kind, company, file } = parsed.output;
    const environment = c.get("environment");
    let flags: Record<string, string> = { environment };
    const { command, company: companyAsked } = COMMANDS[kind];
    if (companyAsked !== null) {
      const companies = await scopedCompanies(c.get("database").readClient, companiesInScope(c));
      const chosen = companies.find((candidate) => candidate.id === company);
      if (!chosen) return again([{ field: "company", message: companyAsked }], 400);
      flags = { ...flags, tin: chosen.tin };
    }
    // The command reads a file as the CLI's does; the upload lives in a private directory of its
    // own, under its own name (which the import and the approval show), only while it runs.
    const dir = await Deno.makeTempDir({ prefix: "console-import-" });
    try {
      const path = `${dir}/${safeFileName(file.name)}`;
      await Deno.writeFile(path, new Uint8Array(await file.arrayBuffer()), { mode: 0o600 });
      const ran = await runConsoleCommand(deps, c, command, { ...flags, file: path });
      if (!ran.ok) return again(refusalProblems(ran, ["file"]), statusOf(ran));
      return c.html(resultPage(c, ran.value));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
  return app;
}
