/**
 * The HTTP floor: a bare node:http server on 127.0.0.1 that answers every request with its path, as
 * little work as an HTTP exchange allows. Run as its own process (as the devnode is), it tells its
 * parent the port over IPC.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const server = createServer((req, res) => {
  const body = Buffer.from(req.url ?? "/", "latin1");
  // Drain any request body so a POST cannot stall the connection.
  req.resume();
  res.writeHead(200, { "content-type": "text/plain", "content-length": body.length });
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  process.send?.({ type: "ready", port: (server.address() as AddressInfo).port });
});
process.on("disconnect", () => process.exit(0));
