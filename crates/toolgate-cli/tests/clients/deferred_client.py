"""A profile that defers tools, seen by an MCP agent (the official Python SDK, `mcp`) through
`toolgate serve`.

Run by crates/toolgate-cli/tests/cli/formats.rs on a workspace whose toolgate.toml
defers `run_shell` and `edit_file` in profile `picked`. Exits 0 when every check holds,
printing one `ok: ...` line per check and `passed: deferred` at the end.

  deferred_client.py --workspace DIR --stdio JSON_ARGV

The session: tools/list leaves the deferred tools out and offers `search_tools`, read-only;
a search finds a deferred tool with its whole definition; the tool found is called by name;
bad arguments to `search_tools` are a recoverable error saying what to send; an unknown tool
is an error that points at `search_tools`.
"""

from __future__ import annotations

import argparse
import json
import pathlib

import mcp_types as types
from mcp import MCPError
from client_support import add_server_args, check, make_client, run_client, text_of


async def deferred(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    asked: list[str] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with make_client(args, 60, elicitation_callback=on_elicit) as client:
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        check("search_tools" in tools, "search_tools is listed", sorted(tools))
        check("run_shell" not in tools and "edit_file" not in tools, "deferred tools are not listed", sorted(tools))
        check("read_file" in tools, "the other tools are listed", sorted(tools))
        a = tools["search_tools"].annotations
        check(a is not None and a.read_only_hint is True, "search_tools is read-only", a)

        found = await client.call_tool("search_tools", {"query": "replace text in a file", "limit": 3})
        check(not found.is_error, "search_tools answers", text_of(found))
        hits = (found.structured_content or json.loads(text_of(found)))["tools"]
        check(1 <= len(hits) <= 3, "at most `limit` tools", hits)
        names = [h["name"] for h in hits]
        check("edit_file" in names, "a deferred tool is found", names)
        edit = next(h for h in hits if h["name"] == "edit_file")
        check(edit["summary"] and "\n" not in edit["summary"], "with a one-line summary", edit)
        check(edit["definition"]["name"] == "edit_file" and "inputSchema" in edit["definition"], "and its whole definition", edit)

        called = await client.call_tool("edit_file", {"path": "notes.txt", "old_string": "draft", "new_string": "final"})
        check(not called.is_error, "the deferred tool found is called by name", text_of(called))
        check((ws / "notes.txt").read_text() == "final notes\n", "and it did its work", (ws / "notes.txt").read_text())
        check(len(asked) == 1 and "edit_file" in asked[0], "the policy asked as for any destructive call", asked)

        bad = await client.call_tool("search_tools", {"query": "", "limit": 99})
        check(bad.is_error is True and "invalid_arguments" in text_of(bad), "bad arguments are a recoverable error", text_of(bad))

        # an unknown tool is a JSON-RPC error (-32602) whose message points at search_tools
        try:
            unknown = await client.call_tool("run_shel", {"command": "true"})
            message = text_of(unknown)
        except MCPError as e:
            message = e.message
        check("search_tools" in message and "not listed" in message, "an unknown tool points at search_tools", message)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workspace", required=True)
    add_server_args(p)
    args = p.parse_args()
    run_client(deferred, args, 90, "deferred")


if __name__ == "__main__":
    main()
