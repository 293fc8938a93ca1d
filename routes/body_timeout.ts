/**
 * Request bodies that stop arriving (a Content-Length larger than what is sent, a chunked body
 * that pauses for good): the whole body must arrive within BODY_TIMEOUT_MS of the request, or the
 * request is answered 408 in its surface's format with `Connection: close`. The body is read here,
 * before any route runs, so no route ever waits on a client: a stalled request holds no
 * idempotency key and no write unit, only its socket (which Deno's server keeps until the client
 * closes it).
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

export interface BodyArrivalOptions {
  /** How long the whole body may take to arrive, from the moment the request reached us. */
  readonly timeoutMs: number;
  /** The size limit of the request's body (413 above it), applied while the body is read. */
  readonly limit: (c: Context<AppEnv>) => MiddlewareHandler<AppEnv>;
}

const EXPIRED = Symbol("expired");

/** A body being read: its deadline, and how its wait ends. */
interface Arrival {
  readonly deadlineMs: number;
  readonly settle: (outcome: Response | void | typeof EXPIRED) => void;
  previous: Arrival | null;
  next: Arrival | null;
}

/**
 * The bodies being read, oldest first. Their deadlines come in the order they arrived (one
 * timeout for all), so one timer, set for the oldest, serves them all: a timer set and cleared per
 * request cost a create about 3 % of the service's thread under load. A body that arrives leaves
 * the list at once, wherever it is. Most bodies are read before the next request comes, so the
 * list is often empty: the timer is then left to fire (it sets itself again only for a body still
 * arriving), and it keeps the process alive only while a body is awaited.
 */
class ArrivalDeadlines {
  readonly #timeoutMs: number;
  #oldest: Arrival | null = null;
  #newest: Arrival | null = null;
  /** The timer, set for the oldest body at the time (or one that has left since); null: none. */
  #timer: unknown = null;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /** Settles with what `reading` settles with, or EXPIRED at the deadline if it is first. */
  race(reading: Promise<Response | void>): Promise<Response | void | typeof EXPIRED> {
    return new Promise((settle, fail) => {
      const arrival: Arrival = {
        deadlineMs: performance.now() + this.#timeoutMs,
        settle,
        previous: this.#newest,
        next: null,
      };
      if (this.#newest) this.#newest.next = arrival;
      else {
        this.#oldest = arrival;
        if (this.#timer === null) this.#arm(arrival.deadlineMs);
        else keepAlive(this.#timer, true);
      }
      this.#newest = arrival;
      reading.then(
        (outcome) => {
          this.#leave(arrival);
          settle(outcome);
        },
        (error) => {
          this.#leave(arrival);
          fail(error);
        },
      );
    });
  }

  #leave(arrival: Arrival): void {
    if (arrival.previous) arrival.previous.next = arrival.next;
    else if (this.#oldest === arrival) this.#oldest = arrival.next;
    else return; // expired already
    if (arrival.next) arrival.next.previous = arrival.previous;
    else this.#newest = arrival.previous;
    arrival.previous = arrival.next = null;
    if (this.#oldest === null && this.#timer !== null) keepAlive(this.#timer, false);
  }

  #arm(atMs: number): void {
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, atMs - performance.now()));
  }

  /** Ends the waits whose deadline passed; the timer is set again for the oldest left. */
  #expire(): void {
    this.#timer = null;
    const now = performance.now();
    while (this.#oldest !== null && this.#oldest.deadlineMs <= now) {
      const expired = this.#oldest;
      this.#leave(expired);
      expired.settle(EXPIRED);
    }
    if (this.#oldest !== null) this.#arm(this.#oldest.deadlineMs);
  }
}

/** Whether a timer keeps the process alive: Node's Timeout (Deno's Node layer), or Deno's id. */
function keepAlive(timer: unknown, alive: boolean): void {
  if (typeof timer === "number") {
    if (alive) Deno.refTimer(timer);
    else Deno.unrefTimer(timer);
    return;
  }
  const node = timer as { ref(): void; unref(): void };
  if (alive) node.ref();
  else node.unref();
}

/** Reads every request body whole, within its size limit and its deadline, before routing. */
export function bodyArrival(options: BodyArrivalOptions): MiddlewareHandler<AppEnv> {
  const deadlines = new ArrivalDeadlines(options.timeoutMs);
  return async (c, next) => {
    if (c.req.raw.body === null) return await next();
    let arrived = false;
    // Routes read the body from Hono's cache of it, filled here.
    const reading = options.limit(c)(c, async () => {
      await c.req.arrayBuffer();
      arrived = true;
    });
    const first = await deadlines.race(reading);
    if (arrived) return await next();
    if (first !== EXPIRED) return first as Response;
    const message = `the request body did not arrive within ${options.timeoutMs} ms`;
    // The rest of the body may still come, or never: the connection is not read again. A read
    // left at the deadline fails once the response is sent; nobody waits for it.
    return errorResponse(c, {
      status: 408,
      code: "request_timeout",
      message,
      issues: [{ field: "body", location: "body", message }],
      headers: { Connection: "close" },
    });
  };
}
