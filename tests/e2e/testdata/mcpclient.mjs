// The TypeScript MCP SDK's client (@modelcontextprotocol/sdk), driven by
// tests/e2e (mcp_tsclient_test.go): `node mcpclient.mjs URL` reads one
// command a line on stdin, as JSON, and answers each with one JSON line on
// stdout, in order. Commands:
//   {"op":"connect","name":N,"token":T}   begin the session of N with bearer T
//   {"op":"call","name":N,"tool":X,"args":{...}}
//   {"op":"flood","groups":[{"name","count","tool","args","sequential"}]}
//   {"op":"close"}                         end every session
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import readline from "node:readline";

const url = new URL(process.argv[2]);
const sessions = new Map();

function failure(e) {
  return { err: `${e?.code ?? ""} ${e?.message ?? String(e)}`.trim() };
}

async function connect(name, token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers },
    reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 100, reconnectionDelayGrowFactor: 1.5, maxRetries: 0 },
  });
  const client = new Client({ name: "mnemofs-ts-test", version: "1" });
  client.onerror = () => {}; // a stream the server ended: the next call says so
  await client.connect(transport);
  sessions.set(name, client);
}

async function call(name, tool, args) {
  const c = sessions.get(name);
  if (!c) return { err: `no session for ${name}` };
  try {
    const r = await c.callTool({ name: tool, arguments: args ?? {} });
    const text = (r.content ?? []).map((x) => x.text ?? "").join("");
    return { text, isError: !!r.isError, structured: r.structuredContent ?? null };
  } catch (e) {
    return failure(e);
  }
}

async function flood(groups) {
  const start = performance.now();
  const one = async (g) => {
    const r = await call(g.name, g.tool, g.args);
    r.end = performance.now() - start;
    return r;
  };
  return Promise.all(
    groups.map(async (g) => {
      if (g.sequential) {
        const out = [];
        for (let i = 0; i < g.count; i++) out.push(await one(g));
        return out;
      }
      return Promise.all(Array.from({ length: g.count }, () => one(g)));
    }),
  );
}

async function run(cmd) {
  switch (cmd.op) {
    case "connect":
      try {
        await connect(cmd.name, cmd.token);
        return { ok: true };
      } catch (e) {
        return failure(e);
      }
    case "call":
      return call(cmd.name, cmd.tool, cmd.args);
    case "flood":
      return { results: await flood(cmd.groups) };
    case "close":
      for (const c of sessions.values()) await c.close().catch(() => {});
      sessions.clear();
      return { ok: true };
  }
  return { err: `unknown op ${cmd.op}` };
}

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  let out;
  try {
    out = await run(JSON.parse(line));
  } catch (e) {
    out = failure(e);
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
