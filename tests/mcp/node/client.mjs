// An independent MCP client: the official TypeScript SDK starts `swarmq mcp` over stdio and
// runs list tools → add → search → inject → ack, plus a refused add. Prints one JSON object.
//   node client.mjs <python> <swarm.yaml>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [python, roster] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: python,
  args: ["-m", "swarmq.cli", "-c", roster, "mcp"],
  env: { ...process.env, SWARMQ_WORKER_ID: "w1", SWARMQ_ASSIGNMENT_ID: "node-session" },
  stderr: "inherit",
});
const client = new Client({ name: "swarmq-node-test", version: "1.0.0" });
await client.connect(transport);

function payload(result) {
  if (result.isError) throw new Error(result.content.map((c) => c.text).join(" "));
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}
const call = async (name, args) => client.callTool({ name, arguments: args });

const out = {};
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const lesson =
  "Run the database migration dry run before deploying any schema change to production";
out.added = payload(await call("knowledge_add", { lesson, tags: ["migration"] }));
out.search = payload(await call("knowledge_search", { query: "database migration dry run" }));
out.inject = payload(
  await call("knowledge_inject", { task: "deploy the schema change with a database migration" }),
);
out.ack = payload(
  await call("knowledge_ack", {
    trace_id: out.inject.trace_id,
    entry_id: out.added.id,
    verdict: "applied",
    reason: "ran the dry run",
  }),
);
const refused = await call("knowledge_add", { lesson: "too short" });
out.refused = { isError: refused.isError === true, text: refused.content.map((c) => c.text).join(" ") };
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
