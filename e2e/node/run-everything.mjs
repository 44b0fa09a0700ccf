// Starts @modelcontextprotocol/server-everything (pinned in package.json) in
// Streamable HTTP mode on 127.0.0.1 and a free port, and prints
// "LISTENING <port>" once it accepts connections. The package itself listens
// on every interface; this wrapper pins it to loopback.
import http from "node:http";

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (port, ...rest) {
  const cb = rest.find((a) => typeof a === "function");
  this.once("listening", () => console.log(`LISTENING ${this.address().port}`));
  return listen.call(this, 0, "127.0.0.1", cb);
};
process.argv = [process.argv[0], "server-everything", "streamableHttp"];
await import("@modelcontextprotocol/server-everything/dist/index.js");
