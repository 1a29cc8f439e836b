"""The official Python MCP SDK (`mcp`) against `toolgate serve --http` on 2026-07-28, where
every request is its own session and a dropped connection cannot be resumed: a client that
re-sends a side-effecting call gets the first call's recorded result, not a second effect.

Run by crates/toolgate-cli/tests/cli/serve_ledger.rs; exits 0 when every check holds, printing
one `ok: ...` line per check.

  ledger_client.py --workspace DIR --url URL --token TOKEN --mode 2026-07-28

Checks:
  dropped   a run_shell call with an idempotency key in `_meta` times out on the client (the
            SDK closes the request's stream); sent again on a new connection it is in progress,
            then its recorded result (`_meta["toolgate/replayed"]`); the command ran once
  sep       the key as `params.idempotencyKey` beside the arguments (SEP-3182): a re-send is a
            replay, other arguments are a conflict, a key that disagrees with `_meta` and one
            that is not a string are JSON-RPC -32602
  derived   the same edit_file call, without a key, from two requests of one caller: the second
            is answered from the ledger (a key derived from the caller, tool and arguments)
"""

from __future__ import annotations

import argparse
import pathlib
from typing import Any, Literal

import anyio
import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of
from mcp.shared.exceptions import MCPError

META_KEY = "io.toolgate/idempotency-key"
REPLAYED = "toolgate/replayed"


def kind(result: types.CallToolResult) -> str | None:
    return ((result.meta or {}).get("toolgate/error") or {}).get("kind")


def lines(path: pathlib.Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


async def until_done(client: Any, send) -> types.CallToolResult:
    """Sends again while the answer is `in_progress` (the first call still runs)."""
    for _ in range(60):
        result = await send(client)
        if kind(result) != "in_progress":
            return result
        check("wait for it to end" in text_of(result), "in progress says to wait", text_of(result))
        await anyio.sleep(0.25)
    raise AssertionError("still in progress")


async def dropped(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    command = {"command": "sleep 1.5; echo x >> dropped.txt; echo sent"}
    meta = {META_KEY: "K-dropped"}
    async with make_client(args, 30) as client:
        check(client.protocol_version == "2026-07-28", "2026-07-28", client.protocol_version)
        try:
            await client.call_tool("run_shell", command, read_timeout_seconds=0.4, meta=meta)
            check(False, "the first call times out on the client")
        except MCPError as e:
            check(e.code == -32001, "the client gave up on the first call", e)
    check(lines(ws / "dropped.txt") == 0, "the first call was still running")
    async with make_client(args, 30) as client:
        result = await until_done(
            client, lambda c: c.call_tool("run_shell", command, meta=meta)
        )
        check(not result.is_error, "the re-send succeeds", text_of(result))
        check((result.meta or {}).get(REPLAYED) is True, "marked as a replay", result.meta)
        check(result.structured_content["stdout"] == "sent\n", "the first call's output", result)
    check(lines(ws / "dropped.txt") == 1, "the command ran once", lines(ws / "dropped.txt"))


class SepCall(types.Request[dict[str, Any], Literal["tools/call"]]):
    """A `tools/call` whose params carry `idempotencyKey` beside `arguments`, as SEP-3182
    writes it (the SDK's own params model has no such field)."""

    method: Literal["tools/call"] = "tools/call"
    params: dict[str, Any]


async def sep_call(client: Any, arguments: dict, key: Any, meta: dict | None = None):
    params: dict[str, Any] = {"name": "run_shell", "arguments": arguments, "idempotencyKey": key}
    if meta:
        params["_meta"] = meta
    return await client.session.send_request(SepCall(params=params), types.CallToolResult)


async def sep(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    once = {"command": "echo y >> sep.txt; echo once"}
    async with make_client(args, 30) as client:
        first = await sep_call(client, once, "K-sep")
        check(not first.is_error, "the first call runs", text_of(first))
        check(REPLAYED not in (first.meta or {}), "not a replay", first.meta)
    async with make_client(args, 30) as client:
        again = await sep_call(client, once, "K-sep")
        check((again.meta or {}).get(REPLAYED) is True, "sent again: a replay", again.meta)
        check(again.structured_content == first.structured_content, "the same result")
        other = await sep_call(client, {"command": "echo z >> sep.txt"}, "K-sep")
        check(kind(other) == "invalid_input", "other arguments", text_of(other))
        check("idempotency_conflict" in text_of(other) and '"K-sep"' in text_of(other), "a conflict naming the key", text_of(other))
        for bad, meta, what in [
            ("K-a", {META_KEY: "K-b"}, "different keys"),
            (7, None, "must be a string"),
        ]:
            try:
                await sep_call(client, once, bad, meta)
                check(False, f"{what}: refused")
            except MCPError as e:
                check(e.code == -32602 and what in e.message, f"{what}: -32602", e)
        bad = await sep_call(client, once, "has space")
        check("invalid_idempotency_key" in text_of(bad), "a malformed key is a tool error", text_of(bad))
    check(lines(ws / "sep.txt") == 1, "the command ran once", lines(ws / "sep.txt"))


async def derived(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    (ws / "notes.txt").write_text("status: draft\n")
    edit = {"path": "notes.txt", "old_string": "draft", "new_string": "sent"}
    async with make_client(args, 30) as client:
        first = await client.call_tool("edit_file", edit)
        check(not first.is_error and REPLAYED not in (first.meta or {}), "the edit runs", text_of(first))
    async with make_client(args, 30) as client:
        again = await client.call_tool("edit_file", edit)
        check(not again.is_error, "the same edit sent again succeeds", text_of(again))
        check((again.meta or {}).get(REPLAYED) is True, "answered from the ledger", again.meta)
        check(again.structured_content == first.structured_content, "with the first result")
    check((ws / "notes.txt").read_text() == "status: sent\n", "edited once")


async def main(args: argparse.Namespace) -> None:
    await dropped(args)
    await sep(args)
    await derived(args)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    add_server_args(p)
    p.add_argument("--workspace", required=True)
    run_client(main, p.parse_args(), 120, "ledger")
