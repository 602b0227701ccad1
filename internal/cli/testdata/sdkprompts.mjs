// A client of the official MCP TypeScript SDK (@modelcontextprotocol/sdk)
// that reads an upstream server's prompts and resources through the
// gateway's streamable HTTP handler, for the gateway's integration tests:
//
//   node sdkprompts.mjs CLIENTS_DIR URL TOKEN PROMPT ARGS_JSON COMPLETE_PROMPT COMPLETE_ARG COMPLETE_VALUE
//
// It lists the prompts, gets PROMPT with the arguments ARGS_JSON, lists
// the resources and reads the first, lists the resource templates, asks
// for the completions of COMPLETE_PROMPT's argument COMPLETE_ARG from
// COMPLETE_VALUE, and prints one line of JSON with every answer:
//
//   {"capabilities":…,"prompts":[…],"prompt":{…},"resources":[…],"read":{…},"templates":[…],"completion":{…}}
//
// A request the SDK refuses ends it with {"error":"…"} and exit status 1.

import { createRequire } from "node:module";
import path from "node:path";

const [clientsDir, url, token, prompt, args, completePrompt, completeArg, completeValue] = process.argv.slice(2);
if (!completeValue && completeValue !== "") {
  console.error("usage: sdkprompts.mjs CLIENTS_DIR URL TOKEN PROMPT ARGS_JSON COMPLETE_PROMPT COMPLETE_ARG COMPLETE_VALUE");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(clientsDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const say = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "toolshelf-sdk-prompts-test", version: "1.0.0" });
try {
  await client.connect(transport);
  const out = { capabilities: client.getServerCapabilities() };
  out.prompts = (await client.listPrompts()).prompts;
  out.prompt = await client.getPrompt({ name: prompt, arguments: JSON.parse(args) });
  out.resources = (await client.listResources()).resources;
  out.read = await client.readResource({ uri: out.resources[0].uri });
  out.templates = (await client.listResourceTemplates()).resourceTemplates;
  out.completion = await client.complete({
    ref: { type: "ref/prompt", name: completePrompt },
    argument: { name: completeArg, value: completeValue },
  });
  say(out);
  await client.close();
} catch (err) {
  say({ error: String(err && err.message ? err.message : err) });
  process.exit(1);
}
