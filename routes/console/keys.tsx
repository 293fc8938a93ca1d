/** @jsxImportSource hono/jsx */
/**
 * Keys (issue 20): company, line and user keys by their non-secret start and creation date, never
 * the secret. An admin rotates a key (the old one keeps working for the grace period; the new
 * secret is shown once, on the answer to the form, never in a link) or revokes it at once. These
 * are the CLI's key:rotate and key:revoke, audited.
 */
import { Hono } from "hono";
import { KEY_KINDS, keySorts, listKeys } from "../../lib/console/keys.ts";
import type { AppDeps } from "../context.ts";
import {
  ConsoleLayout,
  CsrfField,
  type FieldProblem,
  FormProblems,
  listParams,
  notFoundPage,
  Pager,
  requireRole,
  SelectField,
  SortHeader,
  When,
} from "./kit.tsx";
import {
  ActionButton,
  DoneNotice,
  doneRedirect,
  FilterForm,
  ID_PATTERN,
  ListTable,
  queryChoice,
  refusalProblems,
  rowCommand,
  statusOf,
} from "./page_parts.tsx";
import {
  companiesInScope,
  type ConsoleContext,
  type ConsoleEnv,
  hasRole,
  runConsoleCommand,
} from "./session.ts";

const NOTICES = { revoked: "The key was revoked: it stops working at once." };

interface Rotated {
  readonly keyId: string;
  readonly secret: string;
  readonly previousKeyId: string;
  readonly previousExpiresAt: string;
}

async function keysPage(
  c: ConsoleContext,
  deps: AppDeps,
  shown: { problems: readonly FieldProblem[]; rotated?: Rotated },
) {
  const params = listParams(c, { sorts: Object.keys(keySorts), defaultSort: "created" });
  const kind = queryChoice(c, "kind", KEY_KINDS);
  const includeEnded = c.req.query("ended") === "1";
  const page = await listKeys(
    c.get("database").readClient,
    { companyIds: companiesInScope(c), kind, includeEnded },
    params,
  );
  const mayChange = hasRole(c, "admin");
  const now = deps.clock.now();
  return (
    <ConsoleLayout c={c} title="Keys" active="keys">
      <DoneNotice c={c} notices={NOTICES} />
      <FormProblems problems={shown.problems} />
      {shown.rotated
        ? (
          <section class="card attention" aria-labelledby="new-secret">
            <h2 id="new-secret">New secret: copy it now</h2>
            <p>
              This is the only time it is shown; it is stored only as a hash. The key it replaces
              keeps working until{" "}
              <time datetime={shown.rotated.previousExpiresAt}>
                {shown.rotated.previousExpiresAt}
              </time>.
            </p>
            <p class="secret" id="new-key-secret">{shown.rotated.secret}</p>
          </section>
        )
        : null}
      <FilterForm c={c} action="/console/keys">
        <SelectField
          name="kind"
          label="Kind"
          any="Every kind"
          options={KEY_KINDS.map((k) => ({ value: k, label: k }))}
          values={{ kind: kind ?? "" }}
        />
        <SelectField
          name="ended"
          label="Revoked keys"
          options={[{ value: "", label: "hidden" }, { value: "1", label: "shown" }]}
          values={{ ended: includeEnded ? "1" : "" }}
        />
      </FilterForm>
      <ListTable
        label="Keys"
        rows={page.data}
        empty={
          <>
            No keys match. An admin creates companies, users and lines with `deno task admin`, each
            with its keys; show revoked keys or every kind to see more.
          </>
        }
        head={
          <>
            <th scope="col">Key</th>
            <SortHeader c={c} params={params} column="kind" label="Kind" />
            <SortHeader c={c} params={params} column="owner" label="Belongs to" />
            <SortHeader c={c} params={params} column="created" label="Created" />
            <th scope="col">State</th>
            {mayChange ? <th scope="col">Actions</th> : null}
          </>
        }
        row={(key) => {
          const state = key.revokedAt !== null
            ? "revoked"
            : key.expiresAt !== null && key.expiresAt <= now
            ? "expired"
            : key.expiresAt !== null
            ? "rotated"
            : "active";
          return (
            <tr>
              <td>
                <code>{key.hint}</code>
                <span class="hint">{key.id}</span>
              </td>
              <td>{key.kind}</td>
              <td>{key.owner}</td>
              <td>
                <When c={c} at={key.createdAt} />
              </td>
              <td>
                <span class={state === "active" ? "badge good" : "badge bad"}>{state}</span>
                {state === "rotated"
                  ? (
                    <span class="hint">
                      works until <When c={c} at={key.expiresAt} />
                    </span>
                  )
                  : null}
              </td>
              {mayChange
                ? (
                  <td class="actions">
                    {state === "active"
                      ? (
                        <ActionButton
                          action={`/console/keys/${key.id}/rotate`}
                          label="Rotate"
                          ariaLabel={`Rotate key ${key.hint}`}
                          confirm="Issue a new secret? The old one keeps working for the grace period."
                          csrf={<CsrfField c={c} />}
                        />
                      )
                      : null}
                    {state === "active" || state === "rotated"
                      ? (
                        <ActionButton
                          action={`/console/keys/${key.id}/revoke`}
                          label="Revoke"
                          ariaLabel={`Revoke key ${key.hint}`}
                          confirm="Revoke this key? It stops working at once."
                          danger
                          csrf={<CsrfField c={c} />}
                        />
                      )
                      : null}
                  </td>
                )
                : null}
            </tr>
          );
        }}
      />
      <Pager c={c} params={params} hasMore={page.hasMore} />
    </ConsoleLayout>
  );
}

export function keysConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/keys", async (c) => c.html(await keysPage(c, deps, { problems: [] })));

  app.post("/keys/:id/rotate", requireRole("admin"), async (c) => {
    const id = c.req.param("id");
    if (!ID_PATTERN.test(id)) return notFoundPage(c, "This key");
    const rotated = await runConsoleCommand(deps, c, "key:rotate", { key: id });
    if (!rotated.ok) {
      if (statusOf(rotated) === 404) return notFoundPage(c, "This key");
      return c.html(
        await keysPage(c, deps, { problems: refusalProblems(rotated) }),
        statusOf(rotated),
      );
    }
    // Shown on this answer only: a redirect would have to carry the secret in its URL.
    return c.html(
      await keysPage(c, deps, {
        problems: [],
        rotated: {
          keyId: String(rotated.value.key_id),
          secret: String(rotated.value.secret),
          previousKeyId: String(rotated.value.previous_key_id),
          previousExpiresAt: String(rotated.value.previous_key_expires_at),
        },
      }),
    );
  });

  app.post("/keys/:id/revoke", requireRole("admin"), (c) =>
    rowCommand(c, deps, {
      what: "This key",
      command: "key:revoke",
      flags: (id) => ({ key: id }),
      done: () => doneRedirect(c, "/console/keys", "revoked"),
      page: (problems) => keysPage(c, deps, { problems }),
    }));
  return app;
}
