"""What toolgate's Python test clients share: the check that prints `ok: ...` or fails the
run, the text of a tool result, the server flags and the MCP client they pick, and the main
that runs a client under a time limit.

The clients under crates/*/tests/clients import it; the Rust tests start them through
`toolgate_test_support::python::script`, which puts this folder on PYTHONPATH. The MCP SDK
(`mcp`) is imported only by the functions that need it, so a client without it (pydantic-ai's
agent) can use `check`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Awaitable, Callable

import anyio


def check(cond: bool, what: str, detail: object = "") -> None:
    """Prints `ok: WHAT`, or `FAILED: WHAT: DETAIL` and exits 1."""
    if not cond:
        print(f"FAILED: {what}: {detail}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


class Seen:
    """The notifications one session received (its `message_handler`)."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    async def __call__(self, message: Any) -> None:
        if not isinstance(message, Exception):
            self.items.append(message)

    def count(self, kind: type) -> int:
        """How many of the notifications are of `kind`."""
        return sum(isinstance(m, kind) for m in self.items)

    def updated(self) -> list[str]:
        """The URIs of its `notifications/resources/updated`, in order."""
        import mcp_types as types

        return [m.params.uri for m in self.items if isinstance(m, types.ResourceUpdatedNotification)]

    def logs(self, upstream: str) -> list[Any]:
        """The params of its log messages whose logger is `upstream` or `upstream/...`."""
        import mcp_types as types

        return [
            m.params
            for m in self.items
            if isinstance(m, types.LoggingMessageNotification)
            and (m.params.logger == upstream or (m.params.logger or "").startswith(upstream + "/"))
        ]


async def refused(call: Awaitable[Any], needles: list[str], what: str) -> None:
    """Checks that `call` fails with an error whose text holds every one of `needles`."""
    try:
        await call
    except Exception as e:  # the SDK raises an MCPError for a JSON-RPC error
        text = f"{e} {getattr(e, 'error', '')}"
        check(all(n in text for n in needles), what, text)
        return
    check(False, what, "it was accepted")


def text_of(result: Any) -> str:
    """The text blocks of a `CallToolResult`, one a line."""
    import mcp_types as types

    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def add_server_args(p: argparse.ArgumentParser) -> None:
    """The flags that say which server to reach and how: `--mode legacy|2026-07-28|auto`
    and `--stdio JSON_ARGV`, or `--url URL [--token TOKEN] [--post-streams-only]`."""
    p.add_argument("--mode", default="legacy")
    p.add_argument("--stdio")
    p.add_argument("--url")
    p.add_argument("--token")
    p.add_argument(
        "--post-streams-only",
        action="store_true",
        help="streamable HTTP without the standalone GET stream: the client reads only the SSE "
        "streams of its POSTs, so a server's request reaches it only on the stream of the "
        "request it relates to",
    )


def make_client(args: argparse.Namespace, read_timeout_seconds: float, **kw: Any) -> Any:
    """An MCP `Client` for the server `args` name (see `add_server_args`): a process started
    with the `--stdio` argv, or streamable HTTP at `--url` with `--token` as bearer token.
    `kw` goes to `Client` (callbacks)."""
    from mcp import Client

    if args.stdio:
        from mcp.client.stdio import StdioServerParameters

        argv = json.loads(args.stdio)
        server = StdioServerParameters(command=argv[0], args=argv[1:])
    else:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        if getattr(args, "post_streams_only", False):
            from mcp.client.streamable_http import StreamableHTTPTransport

            async def no_get_stream(self: Any, client: Any, read_stream_writer: Any) -> None:
                """The SDK opens the GET stream after `initialized`; this client does not."""

            StreamableHTTPTransport.handle_get_stream = no_get_stream  # type: ignore[method-assign]
        headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
        server = streamable_http_client(args.url, http_client=create_mcp_http_client(headers=headers))
    return Client(server, mode=args.mode, read_timeout_seconds=read_timeout_seconds, **kw)


def run_client(
    client: Callable[[argparse.Namespace], Awaitable[None]],
    args: argparse.Namespace,
    limit_seconds: float,
    passed: str,
) -> None:
    """Runs `client(args)`, failing it after `limit_seconds`, then prints `passed: PASSED`."""

    async def go() -> None:
        with anyio.fail_after(limit_seconds):
            await client(args)

    anyio.run(go)
    print(f"passed: {passed}", flush=True)
