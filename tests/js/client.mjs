// An independent MCP client: the official TypeScript SDK over Streamable HTTP with a bearer token.
// Usage: node client.mjs URL TOKEN  -> prints one JSON object with what it saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "hoprag-ts-check", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const search = await client.callTool({ name: "search", arguments: { query: "What region does Aurora run in?", k: 3 } });
const fetched = await client.callTool({ name: "fetch", arguments: { id: "d03" } });
const hidden = await client.callTool({ name: "fetch", arguments: { id: "d09" } });
console.log(JSON.stringify({
  protocolVersion: transport.protocolVersion ?? null,
  tools: tools.tools.map((t) => ({ name: t.name, hasOutputSchema: Boolean(t.outputSchema) })),
  search: search.structuredContent,
  fetch: fetched.structuredContent,
  hidden: { isError: hidden.isError === true, text: hidden.content?.[0]?.text ?? "" },
}));
await client.close();
