"""Scoped approvals over MCP with the official Python SDK (`mcp`), against `toolgate serve`
over stdio with the workspace's store.

Run by crates/toolgate-cli/tests/cli/approvals.rs. Each client starts its own `toolgate
serve` process (a new MCP session); grants live in the store, which they share. Exits 0 when
every check holds, printing one `ok: ...` line per check and `passed: approvals`.

  approvals_client.py --mode legacy|2026-07-28 --stdio JSON_ARGV

1. a client answers the form with scope "session": its second write_file is not asked;
2. a fresh session is asked, and answers "always" for 2 hours;
3. a third session is not asked at all.
"""

from __future__ import annotations

import argparse
import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def check(cond: bool, what: str, detail: object = "") -> None:
    if not cond:
        print(f"FAILED: {what}: {detail}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def run(args: argparse.Namespace) -> None:
    argv = json.loads(args.stdio)
    asked: list[dict] = []
    answers: list[dict] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.requested_schema)
        if not answers:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=answers.pop(0))

    def client() -> Client:
        server = StdioServerParameters(command=argv[0], args=argv[1:])
        return Client(server, mode=args.mode, read_timeout_seconds=60, elicitation_callback=on_elicit)

    async def write(c: Client, name: str) -> None:
        r = await c.call_tool("write_file", {"path": name, "content": name + "\n"})
        check(not r.is_error, f"write_file {name} runs", text_of(r))

    answers.append({"approve": True, "scope": "session"})
    async with client() as c:
        await write(c, "a.txt")
        scope = asked[0].get("properties", {}).get("scope", {})
        offered = [o.get("const") for o in scope.get("oneOf", [])]
        check(offered == ["once", "session", "always"], "the form offers once, session, always", offered)
        await write(c, "b.txt")
        check(len(asked) == 1, "the session's second call is not asked", len(asked))

    answers.append({"approve": True, "scope": "always", "expires_hours": 2})
    async with client() as c:
        await write(c, "c.txt")
        check(len(asked) == 2, "a fresh session is asked", len(asked))

    async with client() as c:
        await write(c, "d.txt")
        check(len(asked) == 2, "after always, another session is not asked", len(asked))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="legacy")
    p.add_argument("--stdio", required=True)
    args = p.parse_args()

    async def go() -> None:
        with anyio.fail_after(120):
            await run(args)

    anyio.run(go)
    print(f"passed: approvals ({args.mode})", flush=True)


if __name__ == "__main__":
    main()
