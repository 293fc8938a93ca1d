/**
 * The service's listener when it faces clients itself (HEADER_TIMEOUT_MS > 0). Deno.serve waits
 * for a request's headers forever and shows no connection to its caller, so one process could
 * be starved by connections that send half a header line and stop (5,000 of them held 5,000
 * open files). This listener is Node's HTTP server as Deno ships it, which closes a request whose
 * headers are not complete within HEADER_TIMEOUT_MS (408, then the connection), and which tells
 * each connection as it opens: past CONNECTIONS_PER_ADDRESS_MAX from one client address, or
 * CONNECTIONS_MAX in all, a new connection is closed at once, logged and counted. Requests are
 * handed to the same fetch handler Deno.serve would call, with the same connection info.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Metrics } from "../lib/platform/metrics.ts";

export interface GuardedServerOptions {
  readonly hostname: string;
  readonly port: number;
  /** How long a request's headers may take to arrive whole; then 408 and the connection closes. */
  readonly headerTimeoutMs: number;
  /** Open connections one client address may hold; 0: no limit. */
  readonly connectionsPerAddressMax: number;
  /** Open connections in all; 0: no limit. */
  readonly connectionsMax: number;
  readonly metrics: Metrics;
  /** Where the connection-limit lines go (one JSON object each). */
  readonly log: (entry: Record<string, unknown>) => void;
  readonly onListen?: (addr: Deno.NetAddr) => void;
}

/** What main.ts needs of a server, whichever serves. */
export interface ServiceServer {
  readonly addr: Promise<Deno.NetAddr>;
  /** Stops accepting; resolves once the requests in flight are answered. */
  shutdown(): Promise<void>;
}

type FetchHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

/** How often connections are looked at for late headers: a tenth of the timeout, 50 ms to 1 s. */
function checkingIntervalMs(headerTimeoutMs: number): number {
  return Math.min(1000, Math.max(50, Math.floor(headerTimeoutMs / 10)));
}

/** Ends a connection once what was written to it has gone out. */
function closeConnection(socket: Socket): void {
  socket.end(() => socket.destroy());
}

/** Serves `handler` on a Node HTTP server with the header timeout and the connection limits. */
export function serveGuarded(options: GuardedServerOptions, handler: FetchHandler): ServiceServer {
  const byAddress = new Map<string, number>();
  let open = 0;
  // One line when a limit starts refusing (per address, or in all), not one per refused socket.
  const refusingAddresses = new Set<string>();
  let refusingTotal = false;

  // Each open connection and how many of its requests are being answered. Node's own
  // closeIdleConnections missed keep-alive connections that had answered (a SIGTERM then waited
  // for the client to hang up), so shutdown closes the idle ones itself.
  const answering = new Map<Socket, number>();
  let closing = false;
  const server = createServer({
    headersTimeout: options.headerTimeoutMs,
    // The body has its own deadline (BODY_TIMEOUT_MS, answered in each surface's format).
    requestTimeout: 0,
    connectionsCheckingInterval: checkingIntervalMs(options.headerTimeoutMs),
  }, (req, res) => {
    const socket = req.socket;
    answering.set(socket, (answering.get(socket) ?? 0) + 1);
    res.once("close", () => {
      const requests = answering.get(socket);
      if (requests === undefined) return;
      answering.set(socket, requests - 1);
      if (closing && requests === 1) closeConnection(socket);
    });
    void answer(req, res, handler);
  });

  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "unknown";
    const fromAddress = byAddress.get(address) ?? 0;
    const perAddressMax = options.connectionsPerAddressMax;
    const totalMax = options.connectionsMax;
    if (totalMax > 0 && open >= totalMax) {
      options.metrics.connectionRefused("total");
      if (!refusingTotal) {
        refusingTotal = true;
        options.log({
          level: "warn",
          msg: "connection limit reached: new connections are closed",
          limit: "CONNECTIONS_MAX",
          connections_max: totalMax,
        });
      }
      socket.destroy();
      return;
    }
    if (perAddressMax > 0 && fromAddress >= perAddressMax) {
      options.metrics.connectionRefused("per_address");
      if (!refusingAddresses.has(address)) {
        refusingAddresses.add(address);
        options.log({
          level: "warn",
          msg: "connection limit of a client address reached: its new connections are closed",
          limit: "CONNECTIONS_PER_ADDRESS_MAX",
          address,
          connections_per_address_max: perAddressMax,
        });
      }
      socket.destroy();
      return;
    }
    open += 1;
    byAddress.set(address, fromAddress + 1);
    answering.set(socket, 0);
    socket.once("close", () => {
      answering.delete(socket);
      open -= 1;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left === 0) byAddress.delete(address);
      else byAddress.set(address, left);
      if (left < perAddressMax) refusingAddresses.delete(address);
      if (open < totalMax) refusingTotal = false;
    });
  });

  // Node's answer to late headers (408 and close), counted; other client errors as Node does.
  server.on("clientError", (error: Error & { code?: string }, socket: Socket) => {
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") options.metrics.headerTimedOut();
    const status = error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? "408 Request Timeout"
      : error.code === "HPE_HEADER_OVERFLOW"
      ? "431 Request Header Fields Too Large"
      : "400 Bad Request";
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
    socket.destroy();
  });

  let resolveAddr: (addr: Deno.NetAddr) => void;
  const addr = new Promise<Deno.NetAddr>((resolve) => resolveAddr = resolve);
  server.listen(options.port, options.hostname, () => {
    const bound = server.address();
    const listening: Deno.NetAddr = {
      transport: "tcp",
      hostname: typeof bound === "object" && bound ? bound.address : options.hostname,
      port: typeof bound === "object" && bound ? bound.port : options.port,
    };
    resolveAddr(listening);
    options.onListen?.(listening);
  });

  return {
    addr,
    shutdown: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        // Keep-alive connections waiting for their next request are closed now, not at their
        // timeout; those answering finish first, then close.
        for (const [socket, requests] of answering) if (requests === 0) closeConnection(socket);
      }),
  };
}

/** A request of Node's server as a fetch Request, with Deno.serve's URL and connection info. */
function fetchRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  const host = req.headers.host ?? `${req.socket.localAddress}:${req.socket.localPort}`;
  const hasBody = req.headers["transfer-encoding"] !== undefined ||
    Number(req.headers["content-length"] ?? 0) > 0;
  const body = hasBody
    ? new ReadableStream<Uint8Array>({
      start(controller) {
        req.on("data", (chunk: Uint8Array) => controller.enqueue(new Uint8Array(chunk)));
        req.on("end", () => controller.close());
        req.on("error", (error) => controller.error(error));
      },
      cancel() {
        req.destroy();
      },
    })
    : null;
  return new Request(`http://${host}${req.url ?? "/"}`, {
    method: req.method,
    headers,
    body,
    // @ts-ignore: a streamed request body needs duplex, which lib.dom does not declare yet
    duplex: "half",
  });
}

/**
 * A JSON answer is whole when the handler returns it (the app builds it from a string, and every
 * list is paged): it is read at once. Anything else (documents, exports) is streamed as it comes.
 */
function isWholeBody(response: Response): boolean {
  const type = response.headers.get("content-type") ?? "";
  return (type.startsWith("application/json") || type.startsWith("application/problem+json")) &&
    !response.headers.has("content-length");
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  handler: FetchHandler,
): Promise<void> {
  let completed!: () => void;
  const info: Deno.ServeHandlerInfo<Deno.NetAddr> = {
    remoteAddr: {
      transport: "tcp",
      hostname: req.socket.remoteAddress ?? "",
      port: req.socket.remotePort ?? 0,
    },
    completed: new Promise<void>((resolve) => completed = resolve),
  };
  res.once("close", () => completed());
  let response: Response;
  try {
    response = await handler(fetchRequest(req), info);
  } catch (error) {
    console.error(JSON.stringify({
      level: "error",
      msg: "unhandled error in the request handler",
      error: error instanceof Error ? error.stack ?? error.message : String(error),
    }));
    response = new Response("internal error", { status: 500 });
  }
  const headers: [string, string][] = [];
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers.push([name, value]);
  });
  for (const cookie of response.headers.getSetCookie()) headers.push(["set-cookie", cookie]);
  if (response.body !== null && isWholeBody(response)) {
    // Sent in one write with its length: streamed chunk by chunk, a small JSON answer cost
    // several times its handler's work (issue 33).
    let bytes: Uint8Array;
    try {
      bytes = await response.bytes();
    } catch {
      res.destroy();
      return;
    }
    headers.push(["content-length", String(bytes.byteLength)]);
    res.writeHead(response.status, response.statusText || undefined, headers.flat());
    res.end(bytes);
    return;
  }
  res.writeHead(response.status, response.statusText || undefined, headers.flat());
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.once("close", () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      }
      if (res.destroyed) return;
    }
    res.end();
  } catch {
    // The client left, or the body failed half-way: the connection cannot carry more.
    res.destroy();
  }
}
