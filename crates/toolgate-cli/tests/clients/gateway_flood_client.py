"""Two MCP client sessions (the official Python SDK, `mcp`) with `toolgate serve --http` as a
gateway in front of a flooding upstream `fl` and a quiet one `quiet` (both
tests/upstreams/flood_server.py, `[gateway] max_subscriptions = 2`).

Run by crates/toolgate-cli/tests/cli/gateway_flood.rs, which checks the figures this prints
against the budgets of the configuration and the gateway's metrics. Exits 0 when every check
holds, printing one `ok: ...` line per check, a `figures: {JSON}` line and `passed: flood` at
the end.

  gateway_flood_client.py --url URL --token TOKEN --n N

Session A subscribes to two resources, is refused a third (the limit, saying to unsubscribe
first), unsubscribes one and subscribes to the third. Then it calls `fl__flood` (N log
messages, N progress notifications, N/4 resource updates, N/10 resources, tools and prompts
list_changed) with a progress callback; meanwhile session B calls `quiet__echo` and
`fl__echo` over and over, each answer timed. The figures: how long the flood call took, what
session A received of each kind, what both received of resources list_changed, B's slowest
answer, and how often the upstream was sent `tools/list` and `prompts/list`.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import anyio
import mcp_types as types
from client_support import Seen, add_server_args, check, make_client, refused, run_client, text_of


async def flood(args: argparse.Namespace) -> None:
    seen_a, seen_b = Seen(), Seen()
    progress: list[float] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append(p)

    async with make_client(args, 60, message_handler=seen_a) as a:
        async with make_client(args, 60, message_handler=seen_b) as b:
            await a.set_logging_level("debug")
            await a.subscribe_resource("fl+flood://a")
            await a.subscribe_resource("fl+flood://b")
            await a.subscribe_resource("fl+flood://a")
            check(True, "session A subscribes to two resources (one twice)")
            await refused(
                a.subscribe_resource("fl+flood://c"),
                ["fl+flood://c", "2 resources", "max_subscriptions", "unsubscribe"],
                "a third subscription is past the session's limit: refused, saying what to do",
            )
            await b.subscribe_resource("fl+flood://c")
            check(True, "session B has a limit of its own")
            await a.unsubscribe_resource("fl+flood://b")
            await a.subscribe_resource("fl+flood://c")
            check(True, "after an unsubscribe, session A may subscribe to another")

            slowest = 0.0
            answers = 0
            done = anyio.Event()
            result: dict[str, Any] = {}

            async def call_flood() -> None:
                start = time.monotonic()
                r = await a.call_tool("fl__flood", {"n": args.n}, progress_callback=on_progress)
                result["seconds"] = time.monotonic() - start
                result["text"] = text_of(r)
                result["is_error"] = r.is_error
                done.set()

            async def meanwhile() -> None:
                nonlocal slowest, answers
                i = 0
                while not done.is_set():
                    for tool in ("quiet__echo", "fl__echo"):
                        i += 1
                        start = time.monotonic()
                        # arguments of their own each time: the same ones again would be
                        # answered from the idempotency ledger
                        r = await b.call_tool(tool, {"text": f"hi {i}"})
                        slowest = max(slowest, time.monotonic() - start)
                        check(not r.is_error and text_of(r) == f"echo: hi {i}", f"{tool} answers during the flood", text_of(r))
                        answers += 1
                    await anyio.sleep(0.05)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call_flood)
                tg.start_soon(meanwhile)
            check(not result["is_error"] and result["text"] == f"flooded {args.n}", "the flood call completes with its result", result)
            check(answers >= 2, "session B was answered during the flood", answers)
            # what was let through may still be on its way
            await anyio.sleep(1.5)
            # the change pending after the flood is listed within a second of the last
            # listing; on a loaded machine later: asked again until the last listing of
            # each list came after the last change the upstream said (or 10 s)
            # (arguments of their own each time, or the ledger answers the first again)
            deadline = time.monotonic() + 10
            for asked in range(1000):
                r = await b.call_tool("fl__relists", {"asked": asked})
                relists = json.loads(text_of(r))
                current = all(relists[f"{k}_seen"] == relists[f"{k}_changed"] for k in ("tools", "prompts"))
                if current or time.monotonic() > deadline:
                    break
                await anyio.sleep(0.25)
            figures = {
                "seconds": result["seconds"],
                "logs": len(seen_a.logs("fl")),
                "progress": len(progress),
                "last_progress": progress[-1] if progress else None,
                "updated": seen_a.updated().count("fl+flood://a"),
                "updated_b": seen_b.updated().count("fl+flood://a"),
                "list_changed_a": seen_a.count(types.ResourceListChangedNotification),
                "list_changed_b": seen_b.count(types.ResourceListChangedNotification),
                "logs_b": len(seen_b.logs("fl")),
                "slowest_other": slowest,
                "answers_other": answers,
                "relists": relists["tools"],
                "prompt_relists": relists["prompts"],
                "tools_changed": relists["tools_changed"],
                "tools_seen": relists["tools_seen"],
                "prompts_changed": relists["prompts_changed"],
                "prompts_seen": relists["prompts_seen"],
                "prompts_changed_a": seen_a.count(types.PromptListChangedNotification),
            }
            print("figures: " + json.dumps(figures), flush=True)


def main() -> None:
    p = argparse.ArgumentParser()
    add_server_args(p)
    p.add_argument("--n", type=int, required=True)
    run_client(flood, p.parse_args(), 150, "flood")


if __name__ == "__main__":
    main()
