// A client of the official MCP TypeScript SDK (@modelcontextprotocol/sdk),
// driven line by line by the gateway's integration tests, so that the Go
// test plays the model: it reads each answer before it chooses the next
// request.
//
//   node sdkclient.mjs CLIENTS_DIR stdio COMMAND [ARG...]
//   node sdkclient.mjs CLIENTS_DIR http URL [TOKEN]
//
// CLIENTS_DIR is where .ci/mcp-clients installed the SDK. Once connected
// it prints {"server": <serverInfo>, "capabilities": ...}; then each line
// of standard input is a request and gets one line of answer:
//
//   {"op":"list"}                               -> {"tools":[...]}
//   {"op":"call","name":N,"arguments":{...}}    -> {"result":{...}}
//
// and a request the SDK refuses gets {"error":"..."}. At the end of the
// input the client closes its connection and exits 0.

import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";

const [clientsDir, kind, target, ...rest] = process.argv.slice(2);
if (!clientsDir || !kind || !target) {
  console.error("usage: sdkclient.mjs CLIENTS_DIR stdio COMMAND [ARG...] | CLIENTS_DIR http URL [TOKEN]");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(clientsDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");

let transport;
if (kind === "stdio") {
  const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
  transport = new StdioClientTransport({ command: target, args: rest, stderr: "inherit" });
} else if (kind === "http") {
  const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const requestInit = rest[0] ? { headers: { Authorization: `Bearer ${rest[0]}` } } : undefined;
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit });
} else {
  console.error(`unknown transport ${JSON.stringify(kind)}: use stdio or http`);
  process.exit(2);
}

const client = new Client({ name: "toolshelf-sdk-test", version: "1.0.0" });
await client.connect(transport);
const say = (v) => process.stdout.write(JSON.stringify(v) + "\n");
say({ server: client.getServerVersion(), capabilities: client.getServerCapabilities() });

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === "") continue;
  const req = JSON.parse(line);
  try {
    if (req.op === "list") {
      say({ tools: (await client.listTools()).tools });
    } else if (req.op === "call") {
      say({ result: await client.callTool({ name: req.name, arguments: req.arguments }) });
    } else {
      say({ error: `unknown op ${JSON.stringify(req.op)}` });
    }
  } catch (err) {
    say({ error: String(err && err.message ? err.message : err) });
  }
}
await client.close();
