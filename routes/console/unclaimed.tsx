/** @jsxImportSource hono/jsx */
/**
 * Unclaimed property: what the companies in scope hold that is owed and unclaimed, by state and
 * the date it is dormant, with its dormancy, its due diligence and its report year (the CLI's
 * unclaimed:list). Reports are written and remitted with unclaimed:report and unclaimed:remit.
 */
import { Hono } from "hono";
import { listUnclaimedInScope } from "../../lib/obligations/unclaimed.ts";
import type { AppDeps } from "../context.ts";
import { ConsoleLayout, consoleUrl, Money, When } from "./kit.tsx";
import { ListTable } from "./page_parts.tsx";
import { companiesInScope, type ConsoleContext, type ConsoleEnv } from "./session.ts";

const day = (at: number) => new Date(at).toISOString().slice(0, 10);

async function unclaimedPage(c: ConsoleContext) {
  const items = await listUnclaimedInScope(c.get("database"), companiesInScope(c));
  return (
    <ConsoleLayout c={c} title="Unclaimed property" active="unclaimed">
      <p>
        Payments still owed after their offer fell due unchosen, by the state they are owed to and
        the day they are dormant. Write a state's report with{" "}
        <code>unclaimed:report</code>, and remit it once filed with <code>unclaimed:remit</code>.
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
    </ConsoleLayout>
  );
}

/** The unclaimed-property page. */
export function unclaimedConsoleRoutes(_deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/unclaimed", async (c) => c.html(await unclaimedPage(c)));
  return app;
}
