/** A receiver for the delivery benchmark, in its own process: answers 200 to every POST. */
const port = Number(Deno.args[0]);
Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => console.log("ready") },
  async (request) => {
    await request.body?.cancel();
    return new Response("ok");
  },
);
