"""Scoped approvals over MCP with the official Python SDK (`mcp`), against `toolgate serve`
over stdio with the workspace's store.

Run by crates/toolgate-cli/tests/cli/approvals.rs. Each client starts its own `toolgate
serve` process (a new MCP session); grants live in the store, which they share. Exits 0 when
every check holds, printing one `ok: ...` line per check and `passed: approvals`.

  approvals_client.py --mode legacy|2026-07-28 --stdio JSON_ARGV

1. a client answers the form with scope "session": its second write_file of the same path
   is not asked, a write_file of another path is (the grant covers what was asked about);
2. a fresh session is asked, and answers "always" for 2 hours;
3. a third session is not asked about that path at all.
"""

from __future__ import annotations

import argparse

import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of
from mcp import Client


async def run(args: argparse.Namespace) -> None:
    asked: list[dict] = []
    answers: list[dict] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.requested_schema)
        if not answers:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=answers.pop(0))

    def client() -> Client:
        return make_client(args, 60, elicitation_callback=on_elicit)

    async def write(c: Client, name: str) -> None:
        r = await c.call_tool("write_file", {"path": name, "content": name + "\n"})
        check(not r.is_error, f"write_file {name} runs", text_of(r))

    answers.append({"approve": True, "scope": "session"})
    async with client() as c:
        await write(c, "a.txt")
        scope = asked[0].get("properties", {}).get("scope", {})
        offered = [o.get("const") for o in scope.get("oneOf", [])]
        check(offered == ["once", "session", "always"], "the form offers once, session, always", offered)
        await write(c, "a.txt")
        check(len(asked) == 1, "the session's second call on the same path is not asked", len(asked))
        answers.append({"approve": True})
        await write(c, "b.txt")
        check(len(asked) == 2, "another path is asked: the session grant covers a.txt only", len(asked))

    answers.append({"approve": True, "scope": "always", "expires_hours": 2})
    async with client() as c:
        await write(c, "c.txt")
        check(len(asked) == 3, "a fresh session is asked", len(asked))

    async with client() as c:
        await write(c, "c.txt")
        check(len(asked) == 3, "after always, another session is not asked about c.txt", len(asked))


def main() -> None:
    p = argparse.ArgumentParser()
    add_server_args(p)
    args = p.parse_args()
    run_client(run, args, 120, f"approvals ({args.mode})")


if __name__ == "__main__":
    main()
