// The official TypeScript MCP SDK (`@modelcontextprotocol/sdk` from npm) against `toolgate serve`.
//
// Run by crates/toolgate-cli/tests/cli/serve_ts_sdk.rs with the Node of TOOLGATE_TEST_NODE:
//
//   node ts_client.mjs NODE_MODULES WORKSPACE (--stdio JSON_ARGV | --url URL --token TOKEN)
//
// NODE_MODULES is where the SDK is installed (the node_modules holding that Node). The
// workspace holds `many/` (1,200 files with long names). Prints `ok: ...` per check and
// `passed: ts-sdk` at the end; exits 1 at the first check that fails.
//
// The session: list the tools (no schema keyword the SDK's validator does not know), a
// list_dir of 1,200 entries (past the cap: the SDK validates its structured content against
// the outputSchema and accepts it), a recoverable error, run_shell approved through
// elicitation (accepted) streaming progress, run_shell declined, a long run_shell cancelled
// from the client (its next step never runs).

import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import path from "node:path";

const [modules, workspace, how, where, ...rest] = process.argv.slice(2);
const require = createRequire(path.join(modules, "noop.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

function check(cond, what, detail = "") {
  if (!cond) {
    console.log(`FAILED: ${what}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

const textOf = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// what the SDK's schema compiler says about the schemas it is given
const warnings = [];
const warn = console.warn;
console.warn = (...args) => {
  warnings.push(args.join(" "));
  warn(...args);
};

async function main() {
  let transport;
  if (how === "--stdio") {
    const argv = JSON.parse(where);
    transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: "ignore" });
  } else {
    const token = rest[1];
    transport = new StreamableHTTPClientTransport(new URL(where), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
  }
  const answers = [];
  const asked = [];
  const client = new Client({ name: "ts-sdk-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return answers.shift() ?? { action: "cancel" };
  });
  await client.connect(transport);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ["list_dir", "read_file", "run_shell", "read_result"]) {
    check(names.includes(want), `${want} is listed`, names);
  }
  const schemas = JSON.stringify(tools.map((t) => [t.inputSchema, t.outputSchema]));
  check(!/"format":"u?int/.test(schemas), "no schemars integer formats in any schema");

  // a result past the cap: structured content the SDK validates and accepts
  const big = await client.callTool({ name: "list_dir", arguments: { path: "many" } });
  check(!big.isError, "list_dir of 1,200 entries succeeds", textOf(big).slice(0, 300));
  const s = big.structuredContent;
  check(s && s.truncation && s.truncation.handle.startsWith("res_"), "it carries a truncation record with a handle", s && s.truncation);
  check(Buffer.byteLength(textOf(big)) <= 65536, "its text is within the cap", Buffer.byteLength(textOf(big)));
  check(JSON.stringify(JSON.parse(textOf(big))) === JSON.stringify(s), "its text is the JSON of its structured content");
  const page = await client.callTool({
    name: "read_result",
    arguments: { handle: s.truncation.handle, offset: s.truncation.omitted[0].offset, limit: 400 },
  });
  check(!page.isError && page.structuredContent.text.includes("an_entry_with"), "read_result reads on from the offset named", textOf(page).slice(0, 200));

  // an error the model can act on
  const outside = await client.callTool({ name: "read_file", arguments: { path: "../outside.txt" } });
  check(outside.isError === true && textOf(outside).includes("path_outside_workspace"), "a path outside the workspace is a recoverable error", textOf(outside));

  // approval accepted, with progress while it runs
  answers.push({ action: "accept", content: { approve: true } });
  const progress = [];
  const streamed = await client.callTool(
    { name: "run_shell", arguments: { command: "for i in 1 2 3 4; do echo step $i; sleep 0.4; done" } },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 60000 },
  );
  check(!streamed.isError && streamed.structuredContent.stdout.includes("step 4"), "an approved run_shell runs", textOf(streamed).slice(0, 300));
  check(asked.length === 1 && asked[0].includes("run_shell"), "the approval question came through elicitation", asked);
  check(progress.length >= 1, "progress notifications arrived while it ran", progress);
  check(progress.some((p) => (p.message || "").includes("step")), "they carry the output's lines", progress);

  // approval declined: nothing runs
  answers.push({ action: "decline" });
  const declined = await client.callTool({ name: "run_shell", arguments: { command: "touch declined.txt" } });
  check(declined.isError === true && textOf(declined).includes("approval_rejected"), "a declined call is rejected", textOf(declined));
  check(!existsSync(path.join(workspace, "declined.txt")), "the declined command did not run");

  // cancellation: the client gives up, the command is stopped before its next step
  answers.push({ action: "accept", content: { approve: true } });
  const abort = new AbortController();
  const started = Date.now();
  setTimeout(() => abort.abort("the user stopped it"), 1500);
  let cancelled = false;
  try {
    await client.callTool(
      { name: "run_shell", arguments: { command: "sleep 5; touch late.txt" } },
      undefined,
      { signal: abort.signal, timeout: 60000 },
    );
  } catch (e) {
    cancelled = true;
  }
  check(cancelled && Date.now() - started < 5000, "the client cancelled the call", Date.now() - started);
  const after = await client.callTool({ name: "read_file", arguments: { path: "many/an_entry_with_a_fairly_long_name_0000.txt" } });
  check(!after.isError, "the session goes on after the cancel", textOf(after));
  await sleep(5000);
  check(!existsSync(path.join(workspace, "late.txt")), "the cancelled command's next step never ran");

  check(!warnings.some((w) => /unknown format/.test(w)), "the SDK's validator warned about no schema format", warnings);
  await client.close();
  console.log("passed: ts-sdk");
}

main().catch((e) => {
  console.log(`FAILED: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
