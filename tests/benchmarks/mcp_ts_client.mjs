// The same pdb call as bench_mcp.py's, by the official TypeScript MCP SDK's client (the SDK
// family Claude Code's client comes from) over streamable HTTP; prints {"median_ms": X}.
// Run by bench_mcp.py when node and the SDK are found: node mcp_ts_client.mjs URL TOKEN N
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const [url, token, n] = process.argv.slice(2);
const client = new Client({ name: "bench", version: "1" });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
await client.connect(transport);
const times = [];
for (let i = 0; i < Number(n) + 10; i++) {
  const t = performance.now();
  const r = await client.callTool({ name: "pdb", arguments: { command: "p 1+1" } });
  times.push(performance.now() - t);
  if (!r.content[0].text.includes("2")) throw new Error("bad answer");
}
const s = times.slice(10).sort((a, b) => a - b);
console.log(JSON.stringify({ median_ms: s[Math.floor(s.length / 2)] }));
await client.close();
