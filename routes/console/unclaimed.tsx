/** @jsxImportSource hono/jsx */
/**
 * Unclaimed property: what the companies in scope hold that is owed and unclaimed, by state and
 * the date it is dormant, with its kind, its dormancy, its due diligence and its report year (the
 * CLI's unclaimed:list), and each company's obligation settings, read only: they change with
 * obligations:set and unclaimed:dormancy-set, audited admin commands. Reports are written and
 * remitted with unclaimed:report and unclaimed:remit.
 */
import { Hono } from "hono";
import {
  listUnclaimedInScope,
  obligationSettingsInScope,
  type ObligationSettingsView,
} from "../../lib/obligations/unclaimed.ts";
import { OWED_KINDS } from "../../lib/obligations/unclaimed_rules.ts";
import type { AppDeps } from "../context.ts";
import { ConsoleLayout, consoleUrl, Money, When } from "./kit.tsx";
import { ListTable } from "./page_parts.tsx";
import { companiesInScope, type ConsoleContext, type ConsoleEnv } from "./session.ts";

const day = (at: number) => new Date(at).toISOString().slice(0, 10);

/** What an offer that falls due unchosen becomes, in words. */
const EXPIRY_WORDS = {
  cancel: "cancel: the hold goes back to available",
  fallback: "fallback: a check mailed to the address on file",
  hold: "hold: kept owed, its money held",
} as const;

function SettingsTable(props: { c: ConsoleContext; rows: readonly ObligationSettingsView[] }) {
  const test = props.c.get("environment") === "test";
  return (
    <ListTable
      label="Obligation settings"
      rows={props.rows}
      empty={<>No company in scope.</>}
      caption={
        <>
          Read only: an admin changes them with <code>obligations:set</code> and{" "}
          <code>unclaimed:dormancy-set</code> (audited, both environments).
        </>
      }
      head={
        <>
          <th scope="col">Company</th>
          <th scope="col">Offer expiry</th>
          <th scope="col">Default pay_by</th>
          <th scope="col">Fallback method</th>
          <th scope="col">Holder state</th>
          <th scope="col">Dormancy set by an admin</th>
          {test ? <th scope="col">Sandbox dormancy</th> : null}
        </>
      }
      row={(view) => (
        <tr>
          <td>{view.companyName}</td>
          <td>{EXPIRY_WORDS[view.settings.offerExpiryAction]}</td>
          <td>
            {view.settings.payByDays === null
              ? "none: an offer expires after 90 days"
              : `${view.settings.payByDays} days after create`}
          </td>
          <td>
            {view.fallbackMailing === "provider"
              ? "a postal check mailed by the mail provider"
              : "a postal check printed in house"}
          </td>
          <td>{view.settings.holderState ?? "not set"}</td>
          <td>
            {view.dormancyOverrides.length === 0
              ? "none: the built-in table"
              : view.dormancyOverrides.map((o) => (
                <span class="hint">{o.state} {o.propertyType}: {o.days} days</span>
              ))}
          </td>
          {test
            ? (
              <td>
                {view.settings.sandboxDormancyDays === null
                  ? "none"
                  : `${view.settings.sandboxDormancyDays} days`}
              </td>
            )
            : null}
        </tr>
      )}
    />
  );
}

async function unclaimedPage(c: ConsoleContext) {
  const scope = companiesInScope(c);
  const [items, settings] = await Promise.all([
    listUnclaimedInScope(c.get("database"), scope),
    obligationSettingsInScope(c.get("database"), scope),
  ]);
  return (
    <ConsoleLayout c={c} title="Unclaimed property" active="unclaimed">
      <p>
        Payments still owed after their offer fell due unchosen, and money of completed payments
        that came back, by the state they are owed to and the day they are dormant. Write a state's
        report with <code>unclaimed:report</code>, and remit it once filed with{" "}
        <code>unclaimed:remit</code>.
      </p>
      <ListTable
        label="Unclaimed property"
        rows={items}
        empty={<>Nothing is owed and unclaimed.</>}
        head={
          <>
            <th scope="col">State</th>
            <th scope="col">Dormant on</th>
            <th scope="col">Payout</th>
            <th scope="col">Owner</th>
            <th scope="col">Amount</th>
            <th scope="col">Kind</th>
            <th scope="col">Type</th>
            <th scope="col">Due diligence</th>
            <th scope="col">Report year</th>
          </>
        }
        row={(item) => (
          <tr>
            <td>{item.state ?? "no state: set the holder's state"}</td>
            <td>
              {day(item.dormantAt)}
              <span class="hint">{item.dormancyDays} days: {item.dormancySource}</span>
            </td>
            <td>
              <a href={consoleUrl(c, `/console/payouts/${item.payoutId}`)}>{item.payoutId}</a>
            </td>
            <td>{[item.ownerFirst, item.ownerLast].filter(Boolean).join(" ")}</td>
            <td>
              <Money cents={item.amountCents} />
            </td>
            <td>{OWED_KINDS[item.kind]}</td>
            <td>{item.propertyType}</td>
            <td>
              {item.notices.length === 0
                ? item.noticeAt === null ? "under $50: none" : `due ${day(item.noticeAt)}`
                : item.notices.map((n) => (
                  <span class="hint">
                    {n.channel} {n.outcome.replace("_", " ")} <When c={c} at={n.sentAt} />
                  </span>
                ))}
            </td>
            <td>{item.reportYear}</td>
          </tr>
        )}
      />
      <h2>Settings</h2>
      <SettingsTable c={c} rows={settings} />
    </ConsoleLayout>
  );
}

/** The unclaimed-property page. */
export function unclaimedConsoleRoutes(_deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/unclaimed", async (c) => c.html(await unclaimedPage(c)));
  return app;
}
