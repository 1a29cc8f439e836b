"""An MCP client session (the official Python SDK, `mcp`) with `toolgate serve` as a gateway
in front of real upstream servers from npm: server-everything over stdio (`ev`) and over
streamable HTTP (`web`), server-filesystem over stdio (`fs`).

Run by crates/toolgate-cli/tests/cli/gateway_clients.rs. Exits 0 when every check holds,
printing one `ok: ...` line per check and `passed: gateway` at the end.

  gateway_client.py --workspace DIR --stdio JSON_ARGV

The session: list (every upstream's tools, namespaced, with annotations that only tighten);
call over stdio and HTTP; an upstream's error as a recoverable result; a path outside the
workspace refused before the upstream sees it; image content passed through; progress
passed through; a call cancelled by the client ends, and the session goes on.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import anyio
from client_support import add_server_args, check, make_client, run_client, text_of


async def gateway(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    async with make_client(args, 60) as client:
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        for want in ["ev__echo", "ev__get-tiny-image", "ev__trigger-long-running-operation",
                     "fs__read_text_file", "fs__write_file", "web__echo", "read_file"]:
            check(want in tools, f"{want} is listed", sorted(tools))
        check(not any(n.startswith("ev__") and "__" not in n[4:] and n[4:].startswith("_") for n in tools), "names are namespaced once")
        a = tools["fs__read_text_file"].annotations
        check(a.read_only_hint is True and a.open_world_hint is True, "a trusted read-only claim stands, open world stays", a)
        a = tools["fs__write_file"].annotations
        check(a.read_only_hint is False and a.destructive_hint is True, "fs__write_file is destructive", a)
        a = tools["ev__echo"].annotations
        check(a.read_only_hint is False and a.destructive_hint is True and a.open_world_hint is True, "an untrusted upstream's tool gets the strictest hints", a)

        r = await client.call_tool("ev__echo", {"message": "hello"})
        check(not r.is_error and "Echo: hello" in text_of(r), "ev__echo answers over stdio", text_of(r))
        r = await client.call_tool("web__echo", {"message": "over http"})
        check(not r.is_error and "Echo: over http" in text_of(r), "web__echo answers over streamable HTTP", text_of(r))

        (ws / "notes.txt").write_text("gateway notes\n")
        r = await client.call_tool("fs__read_text_file", {"path": "notes.txt"})
        check(not r.is_error and "gateway notes" in text_of(r), "fs__read_text_file reads a workspace file by its relative path", text_of(r))
        r = await client.call_tool("fs__read_text_file", {"path": "missing.txt"})
        check(r.is_error is True and "upstream" in text_of(r) and "missing.txt" in text_of(r), "an upstream's error is a recoverable result naming the file", text_of(r))
        r = await client.call_tool("fs__read_text_file", {"path": "../outside.txt"})
        check(r.is_error is True and "path_outside_workspace" in text_of(r), "a path outside the workspace is refused by toolgate", text_of(r))

        r = await client.call_tool("ev__get-tiny-image", {})
        kinds = [c.type for c in r.content]
        check(not r.is_error and "image" in kinds, "image content is passed through", kinds)

        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        r = await client.call_tool(
            "ev__trigger-long-running-operation", {"duration": 1, "steps": 4}, progress_callback=on_progress
        )
        check(not r.is_error, "the long-running operation completes", text_of(r))
        check(len(seen) >= 3 and seen == sorted(seen), "the upstream's progress reaches the client", seen)

        started = time.monotonic()
        with anyio.move_on_after(1.5):
            await client.call_tool("ev__trigger-long-running-operation", {"duration": 30, "steps": 30})
        took = time.monotonic() - started
        check(took < 5, "a cancelled call ends when the client cancels it", took)
        r = await client.call_tool("ev__echo", {"message": "after"})
        check(not r.is_error and "Echo: after" in text_of(r), "the session goes on after a cancellation", text_of(r))


def main() -> None:
    p = argparse.ArgumentParser()
    add_server_args(p)
    p.add_argument("--workspace", required=True)
    run_client(gateway, p.parse_args(), 120, "gateway")


if __name__ == "__main__":
    main()
