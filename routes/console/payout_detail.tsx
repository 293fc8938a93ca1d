/** @jsxImportSource hono/jsx */
/**
 * Payout detail (issue 20): the timeline, ledger entries, events with their deliveries,
 * notifications with their status, portal link status, the chosen method (last four only),
 * endorsements and signed documents; and the actions the operator's role and the payout's state
 * allow: cancel and resend (clerk), approve or reject a payment an approval rule holds (clerk),
 * re-offer after a failure (admin). A payout of another company
 * answers 404, as a missing one does.
 */
import { batchPage } from "../../lib/console/needs_action.ts";
import { explainFailure } from "../../lib/payouts/failure_reasons.ts";
import { Hono } from "hono";
import type { Child } from "hono/jsx";
import { payoutActions } from "../../lib/console/payout_actions.ts";
import { type PayoutDetail, payoutDetail } from "../../lib/console/payouts.ts";
import { describeInFlight } from "../../lib/payouts/transition.ts";
import type { AppDeps } from "../context.ts";
import {
  ConsoleLayout,
  consoleUrl,
  CsrfField,
  EmptyState,
  methodLabel,
  Money,
  notFoundPage,
  Notice,
  refusalPage,
  refusalStatus,
  requireRole,
  When,
} from "./kit.tsx";
import { ListTable } from "./page_parts.tsx";
import { StatusBadge } from "./payouts.tsx";
import {
  companiesInScope,
  type ConsoleContext,
  type ConsoleEnv,
  hasRole,
  runConsoleCommand,
} from "./session.ts";

/** What a finished action tells the operator on the page it returns to (`?done=`). */
const DONE: Readonly<Record<string, string>> = {
  canceled: "The payout was canceled and its held money went back to available.",
  resent: "The payee's notification was sent again.",
  reoffered: "The payout will be offered to the payee again in a moment.",
  approved: "The payment was approved: its payee is offered it now.",
  rejected: "The payment was rejected: the payout is canceled and its held money went back.",
};

const PAYOUT_ID = /^[A-Za-z0-9_-]{1,64}$/;

function Section(props: { title: string; id: string; children: Child }) {
  return (
    <section aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** Audited payout actions as the team says them. */
const OPERATOR_ACTIONS: Readonly<Record<string, string>> = {
  "payout:cancel": "canceled",
  "payout:resend_notification": "resent the payee's link",
  "payout:reoffer": "offered again",
  "payout:approve": "approved",
  "payout:reject": "rejected",
  "payout:late-return": "recorded a late return",
  "payouts:recall": "asked the bank to recall",
};

const RAIL_LABELS: Readonly<Record<string, string>> = {
  ach: "ACH",
  check: "Check",
  paypal: "PayPal",
};

/** The last failure with its plain meaning and next step, kept after a re-offer. */
function LastFailure(
  props: { c: ConsoleContext; failure: NonNullable<PayoutDetail["lastFailure"]> },
) {
  const { failure } = props;
  const reason = explainFailure(failure.code);
  return (
    <>
      <dt>Last failure</dt>
      <dd class="reason">
        <strong>{failure.code}</strong>: {reason.meaning}{" "}
        <span class="next-step">Next step: {reason.nextStep}</span>
        <span class="hint">
          {methodLabel(failure.methodId, failure.lastFour)}
          {failure.at !== null ? ", " : ""}
          {failure.at !== null ? <When c={props.c} at={failure.at} /> : null}
        </span>
      </dd>
    </>
  );
}

/** The chosen method, never more than its last four digits. */
function methodText(payout: PayoutDetail): string {
  if (payout.paymentMethodId === null) return "Not chosen yet";
  return methodLabel(payout.paymentMethodId, payout.methodLastFour);
}

function ActionForm(
  props: {
    c: ConsoleContext;
    payoutId: string;
    action: string;
    label: string;
    confirm: string;
    danger?: boolean;
  },
) {
  return (
    <form
      method="post"
      action={`/console/payouts/${props.payoutId}/${props.action}`}
      data-confirm={props.confirm}
    >
      <CsrfField c={props.c} />
      <button type="submit" class={props.danger ? "danger" : "secondary"}>{props.label}</button>
    </form>
  );
}

function DetailPage(props: { c: ConsoleContext; payout: PayoutDetail; done?: string }) {
  const { c, payout } = props;
  const held = payout.inFlight !== null && payout.inFlight.stage !== "queued"
    ? payout.inFlight
    : null;
  // Money in a built batch or later: cancel and re-offer would be refused, so they are not offered.
  const allowed = held === null
    ? payoutActions(payout)
    : { ...payoutActions(payout), cancel: false, reoffer: false };
  const clerk = hasRole(c, "clerk");
  const admin = hasRole(c, "admin");
  const pending = payout.status === "pending_approval";
  const actions = [
    pending && clerk
      ? (
        <ActionForm
          c={c}
          payoutId={payout.id}
          action="approve"
          label="Approve payment"
          confirm="Approve this payment? Its payee is offered it now."
        />
      )
      : null,
    pending && clerk
      ? (
        <ActionForm
          c={c}
          payoutId={payout.id}
          action="reject"
          label="Reject payment"
          confirm="Reject this payment? The payout is canceled and its hold released."
          danger
        />
      )
      : null,
    allowed.cancel && clerk
      ? (
        <ActionForm
          c={c}
          payoutId={payout.id}
          action="cancel"
          label="Cancel payout"
          confirm="Cancel this payout? Its held money goes back to available."
          danger
        />
      )
      : null,
    allowed.resend && clerk
      ? (
        <ActionForm
          c={c}
          payoutId={payout.id}
          action="resend"
          label="Resend notification"
          confirm="Send the payee a new link now?"
        />
      )
      : null,
    allowed.reoffer && admin
      ? (
        <ActionForm
          c={c}
          payoutId={payout.id}
          action="reoffer"
          label="Offer again"
          confirm="Offer the payee the payment methods again?"
        />
      )
      : null,
  ].filter((action) => action !== null);
  return (
    <ConsoleLayout
      c={c}
      title={`Payout to ${payout.payeeName || payout.email || payout.id}`}
      active="payouts"
    >
      {props.done && DONE[props.done] ? <Notice>{DONE[props.done]}</Notice> : null}
      {payout.voidAwaitingPaidItems
        ? (
          <Notice>
            Check {payout.voidAwaitingPaidItems.checkNumber}{" "}
            was voided and the void reached the bank, but the payee may have deposited it first.
            {" "}
            {payout.voidAwaitingPaidItems.exceptionOpen
              ? "The bank reported it paid: resolve its paid-item exception (Check exceptions); the payout is not offered again."
              : (
                <>
                  The payout is offered again once a paid-items file imported from{" "}
                  <When c={c} at={payout.voidAwaitingPaidItems.coveredFrom} /> shows it unpaid.
                </>
              )}
          </Notice>
        )
        : held
        ? (
          <Notice>
            Money in flight, so it cannot be canceled or offered again now:{" "}
            {describeInFlight(held)}.
          </Notice>
        )
        : null}
      <div class="cards">
        <div class="card">
          <dl class="facts">
            <dt>Amount</dt>
            <dd>
              <Money cents={payout.amountCents} />
            </dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={payout.status} />
            </dd>
            {payout.lastFailure ? <LastFailure c={c} failure={payout.lastFailure} /> : null}
            <dt>Held now</dt>
            <dd>
              <Money cents={payout.heldCents} />
            </dd>
            <dt>Fees</dt>
            <dd>
              payor <Money cents={payout.payorFeeCents} />, payee{" "}
              <Money cents={payout.payeeFeeCents} />, service{" "}
              <Money cents={payout.serviceFeeCents} />
            </dd>
            <dt>Method</dt>
            <dd>{methodText(payout)}</dd>
            <dt>Retries</dt>
            <dd>{payout.retryCount}</dd>
          </dl>
        </div>
        <div class="card">
          <dl class="facts">
            <dt>Payee</dt>
            <dd>{payout.payeeName || "—"}</dd>
            <dt>E-mail</dt>
            <dd>{payout.email ?? "—"}</dd>
            <dt>Phone</dt>
            <dd>{payout.phone ?? "—"}</dd>
            <dt>Company</dt>
            <dd>{payout.companyName} · {payout.lineCode}</dd>
            <dt>Claim</dt>
            <dd>{payout.claimId ?? "—"}</dd>
            <dt>Disbursement</dt>
            <dd>
              <a href={consoleUrl(c, `/console/disbursements/${payout.disbursementId}`)}>
                {payout.disbursementUuid}
              </a>
            </dd>
            <dt>Payout id</dt>
            <dd>{payout.id}</dd>
            <dt>Created</dt>
            <dd>
              <When c={c} at={payout.createdAt} />
            </dd>
          </dl>
        </div>
      </div>
      <Section title="Actions" id="actions">
        {actions.length > 0 ? <div class="actions">{actions}</div> : (
          <p>
            {clerk
              ? "No action applies to a payout in this state."
              : "Your role (viewer) reads payouts; a clerk or an admin acts on them."}
          </p>
        )}
      </Section>
      <Section title="Timeline" id="timeline">
        <ol>
          {payout.timeline.map((step) => (
            <li>
              <When c={c} at={step.at} /> — <StatusBadge status={step.to} />
              {step.detail ? ` ${step.detail}` : ""}
            </li>
          ))}
        </ol>
      </Section>
      <Section title="Who acted" id="operators">
        {payout.operatorActions.length === 0 ? <p>No operator has acted on this payout.</p> : (
          <ol>
            {payout.operatorActions.map((a) => (
              <li>
                <When c={c} at={a.at} /> — {OPERATOR_ACTIONS[a.action] ?? a.action} by {a.operator}
                {" "}
                <span class="hint">{a.origin}</span>
              </li>
            ))}
          </ol>
        )}
      </Section>
      <Section title="Files, batches and references" id="paper">
        {payout.railReference || payout.mailingAddress
          ? (
            <dl class="facts">
              {payout.railReference
                ? (
                  <>
                    <dt>Rail reference</dt>
                    <dd>
                      <code>{payout.railReference}</code>
                    </dd>
                  </>
                )
                : null}
              {payout.mailingAddress
                ? (
                  <>
                    <dt>Mailing address</dt>
                    <dd>{payout.mailingAddress}</dd>
                  </>
                )
                : null}
            </dl>
          )
          : null}
        <ListTable
          label="Files, batches and references"
          rows={payout.paper}
          empty="No submission of this payout is in a file or batch."
          head={
            <>
              <th scope="col">Rail</th>
              <th scope="col">File or batch</th>
              <th scope="col">Trace, check or item</th>
              <th scope="col">Entry</th>
              <th scope="col" class="num">Amount</th>
            </>
          }
          row={(line) => (
            <tr>
              <td>{RAIL_LABELS[line.rail] ?? line.rail}</td>
              <td>
                {line.batchId === null
                  ? "queued for the next cutoff"
                  : (
                    <a href={consoleUrl(c, batchPage(line.rail, line.batchId).path)}>
                      {line.batchReference ?? line.batchId}
                    </a>
                  )}
                {line.batchStatus ? <span class="hint">{line.batchStatus}</span> : null}
              </td>
              <td>
                {line.traceNumber ? `trace ${line.traceNumber}` : ""}
                {line.checkNumber !== null ? `check ${line.checkNumber}` : ""}
                {line.providerItemId ? `item ${line.providerItemId}` : ""}
                {line.accountLastFour
                  ? <span class="hint">account ending in {line.accountLastFour}</span>
                  : null}
              </td>
              <td>
                {line.status}
                {line.returnCode ? ` (${line.returnCode})` : ""}
                <span class="hint">
                  <code>{line.reference}</code>
                </span>
              </td>
              <td class="num">
                <Money cents={line.amountCents} />
              </td>
            </tr>
          )}
        />
      </Section>
      <Section title="Ledger entries" id="ledger">
        <ListTable
          label="Ledger entries"
          rows={payout.ledger}
          empty="No money has moved for this payout yet."
          head={
            <>
              <th scope="col">Posted</th>
              <th scope="col">Kind</th>
              <th scope="col">Account</th>
              <th scope="col" class="num">Amount</th>
            </>
          }
          row={(t) =>
            t.entries.map((e, index) => (
              <tr>
                <td>{index === 0 ? <When c={c} at={t.postedAt} /> : ""}</td>
                <td>{index === 0 ? t.kind : ""}</td>
                <td>{e.account}</td>
                <td class="num">
                  <Money cents={e.amountCents} />
                </td>
              </tr>
            ))}
        />
      </Section>
      <Section title="Events and webhook deliveries" id="events">
        <ListTable
          label="Events and webhook deliveries"
          rows={payout.events}
          empty="No event was recorded for this payout yet."
          head={
            <>
              <th scope="col">Event</th>
              <th scope="col">When</th>
              <th scope="col">Deliveries</th>
            </>
          }
          row={(event) => (
            <tr>
              <td>{event.type ?? `event ${event.eventTypeId}`}</td>
              <td>
                <When c={c} at={event.createdAt} />
              </td>
              <td>
                {event.deliveries.length === 0 ? "No endpoint" : (
                  <ul>
                    {event.deliveries.map((d) => (
                      <li>
                        {d.url}:{" "}
                        <span class={d.status === "failed" ? "badge bad" : "badge"}>
                          {d.status}
                        </span>
                        {` after ${d.attempts} attempt${d.attempts === 1 ? "" : "s"}`}
                        {d.lastStatusCode === null ? "" : `, last HTTP ${d.lastStatusCode}`}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          )}
        />
      </Section>
      <Section title="Notifications" id="notifications">
        <ListTable
          label="Notifications"
          rows={payout.notifications}
          empty="The payee has not been notified yet."
          head={
            <>
              <th scope="col">Channel</th>
              <th scope="col">To</th>
              <th scope="col">Subject</th>
              <th scope="col">Status</th>
              <th scope="col">Queued</th>
              <th scope="col">Sent</th>
            </>
          }
          row={(n) => (
            <tr>
              <td>{n.channel}</td>
              <td>{n.recipient}</td>
              <td>{n.subject ?? "—"}</td>
              <td>
                <span class={n.status === "failed" ? "badge bad" : "badge"}>
                  {n.status}
                </span>
                {n.lastError ? <span class="hint">{n.lastError}</span> : null}
              </td>
              <td>
                <When c={c} at={n.createdAt} />
              </td>
              <td>
                <When c={c} at={n.sentAt} />
              </td>
            </tr>
          )}
        />
      </Section>
      <Section title="Portal links" id="portal">
        {payout.portalLinks.length === 0
          ? (
            <EmptyState>
              No portal link was sent yet: one goes with the first notification.
            </EmptyState>
          )
          : (
            <ul>
              {payout.portalLinks.map((link) => (
                <li>
                  {link.partyUuid ? `Party ${link.partyUuid}` : "Payee"}:{" "}
                  <strong>{link.state}</strong>
                  {" — sent "}
                  <When c={c} at={link.createdAt} />
                  {", expires "}
                  <When c={c} at={link.expiresAt} />
                </li>
              ))}
            </ul>
          )}
      </Section>
      <Section title="Endorsements" id="endorsements">
        {payout.endorsements.length === 0 ? <p>This payout needs no endorsement.</p> : (
          <ul>
            {payout.endorsements.map((e) => (
              <li>
                {e.partyName}: <strong>{e.status}</strong>
                {e.typedName ? ` (signed as ${e.typedName})` : ""}
                {e.decidedAt !== null
                  ? (
                    <>
                      {" "}
                      <When c={c} at={e.decidedAt} />
                    </>
                  )
                  : null}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section title="Signed documents" id="documents">
        {payout.signedDocuments.length === 0 ? <p>No document was signed for this payout.</p> : (
          <ul>
            {payout.signedDocuments.map((d) => (
              <li>
                {d.name}, signed by {d.signedBy} <When c={c} at={d.signedAt} />
                <span class="hint">SHA-256 of the original: {d.sha256}</span>
              </li>
            ))}
          </ul>
        )}
      </Section>
    </ConsoleLayout>
  );
}

export function payoutDetailConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  /** The payout of the path within the operator's companies, or null (answered 404). */
  const payoutInScope = (c: ConsoleContext, id: string) =>
    PAYOUT_ID.test(id)
      ? payoutDetail(c.get("database"), companiesInScope(c), id, deps.clock.now())
      : Promise.resolve(null);

  app.get("/:id", async (c) => {
    const payout = await payoutInScope(c, c.req.param("id"));
    if (!payout) return notFoundPage(c, `Payout ${c.req.param("id")}`);
    return c.html(<DetailPage c={c} payout={payout} done={c.req.query("done")} />);
  });

  /** Runs an action on a payout in scope and returns to its page, or shows the refusal. */
  const act = (
    run: (
      c: ConsoleContext,
      id: string,
    ) => Promise<{ ok: true } | { ok: false; code: string; message: string }>,
    done: string,
  ) =>
  async (c: ConsoleContext) => {
    const id = c.req.param("id") ?? "";
    const payout = await payoutInScope(c, id);
    if (!payout) return notFoundPage(c, `Payout ${id}`);
    const result = await run(c, id);
    if (!result.ok) return refusalPage(c, refusalStatus(result.code), result.message);
    return c.redirect(consoleUrl(c, `/console/payouts/${id}`, { done }), 303);
  };

  // Each action is the CLI's command of the same name, with its audit row: nothing of its own.
  const command = (name: string, done: string) =>
    act(
      (c, id) =>
        runConsoleCommand(deps, c, name, { payout: id, environment: c.get("environment") }),
      done,
    );
  app.post("/:id/cancel", requireRole("clerk"), command("payouts:cancel", "canceled"));
  app.post("/:id/resend", requireRole("clerk"), command("payouts:resend", "resent"));
  app.post("/:id/reoffer", requireRole("admin"), command("payouts:reoffer", "reoffered"));
  app.post("/:id/approve", requireRole("clerk"), command("payouts:approve", "approved"));
  app.post("/:id/reject", requireRole("clerk"), command("payouts:reject", "rejected"));
  return app;
}
