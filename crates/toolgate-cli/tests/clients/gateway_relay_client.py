"""Two MCP client sessions (the official Python SDK, `mcp`) with `toolgate serve --http` as a
gateway in front of the scripted upstreams `sc` and `sc2` (tests/upstreams/scripted_server.py
with resources): what the gateway passes between a client and an upstream besides calls.

Run by crates/toolgate-cli/tests/cli/gateway_relay.rs, which then checks what reached the
upstreams. Exits 0 when every check holds, printing one `ok: ...` line per check and
`passed: relay` at the end.

  gateway_relay_client.py --url URL --token TOKEN --prompts FILE

Session A subscribes to `sc+notes://a` and gets the upstream's update of it at that URI;
session B, not subscribed, gets none; bad subscriptions (unknown URI, another upstream's
namespace, no namespace, a resource a rule refuses) and an unsubscribe without a subscribe
are refused with clear errors; an unsubscribed session gets no more updates; after the
upstream crashes and is started again, the subscription holds. The upstream's
`resources/list_changed` and (a new prompt) `prompts/list_changed` reach both sessions; its
log message while serving A's call reaches A only, namespaced and cleaned, at A's level.
Session B then subscribes and ends without unsubscribing (the test sees the upstream told).
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import Any

import anyio
import mcp_types as types
from client_support import Seen, add_server_args, check, make_client, refused, run_client, text_of


async def until(cond, what: str, seconds: float = 10) -> None:
    with anyio.move_on_after(seconds):
        while not cond():
            await anyio.sleep(0.05)
    check(cond(), what)


touches = 0


async def touch(client: Any, uri: str) -> Any:
    """Calls the upstream's `touch` of `uri`, with arguments of its own each time (the same
    ones again would be answered from toolgate's idempotency ledger, not sent upstream)."""
    global touches
    touches += 1
    return await client.call_tool("sc__touch", {"uri": uri, "n": touches})


async def relay(args: argparse.Namespace) -> None:
    seen_a, seen_b = Seen(), Seen()
    async with make_client(args, 60, message_handler=seen_a) as a:
        caps = a.server_capabilities
        check(caps.resources is not None and caps.resources.subscribe is True, "subscribe is declared on 2025-11-25", caps)
        check(caps.resources.list_changed is True and caps.prompts.list_changed is True, "listChanged is declared for resources and prompts", caps)
        async with make_client(args, 60, message_handler=seen_b) as b:
            await a.subscribe_resource("sc+notes://a")
            check(True, "session A subscribes to sc+notes://a")
            await a.subscribe_resource("sc+notes://a")
            check(True, "subscribing again is no error")
            r = await touch(b, "notes://a")
            check(not r.is_error, "the upstream is told to update notes://a", text_of(r))
            await until(lambda: "sc+notes://a" in seen_a.updated(), "session A gets the update at the namespaced URI")
            await anyio.sleep(0.5)
            check(seen_b.updated() == [], "session B, not subscribed, gets no update", seen_b.updated())
            check(set(seen_a.updated()) == {"sc+notes://a"}, "only the subscribed URI's updates", seen_a.updated())

            # an update of a resource no one is subscribed to reaches no one
            await touch(a, "notes://b")
            await anyio.sleep(0.5)
            check("sc+notes://b" not in seen_a.updated() + seen_b.updated(), "an update no session subscribed to is dropped")

            await refused(a.subscribe_resource("sc+notes://missing"), ["sc+notes://missing", "not_found"], "an unknown URI is refused")
            await refused(a.subscribe_resource("zz+notes://a"), ["zz+notes://a", "cannot be subscribed"], "a URI of no upstream's namespace is refused")
            await refused(a.subscribe_resource("notes://a"), ["notes://a", "cannot be subscribed"], "a URI without a namespace is refused")
            await refused(a.subscribe_resource("sc2+notes://a"), ["toolgate.upstream.sc2.read_resource", "a rule denies"], "a resource a rule refuses cannot be subscribed to")
            await refused(a.unsubscribe_resource("sc+notes://b"), ["sc+notes://b", "not subscribed"], "an unsubscribe without a subscribe is refused")
            await refused(b.unsubscribe_resource("sc+notes://a"), ["sc+notes://a", "not subscribed"], "another session's subscription is not B's to end")

            # the upstream crashes; started again, it is subscribed again
            r = await a.call_tool("sc__die", {})
            check(r.is_error, "the upstream's crash fails the call", text_of(r))
            before = len(seen_a.updated())
            ok = False
            with anyio.move_on_after(20):
                while not ok:
                    await anyio.sleep(0.3)
                    r = await touch(b, "notes://a")
                    ok = not r.is_error
            check(ok, "the upstream is started again", text_of(r))
            await until(lambda: len(seen_a.updated()) > before, "after the restart, session A still gets updates")

            # list changes from the upstream reach every session; a new prompt is pinned first
            prompts = pathlib.Path(args.prompts)
            listed = json.loads(prompts.read_text())
            listed.append({"name": "fresh", "description": "A new prompt."})
            prompts.write_text(json.dumps(listed))
            r = await a.call_tool("sc__announce", {})
            check(not r.is_error, "the upstream announces changed lists", text_of(r))
            for s, name in [(seen_a, "A"), (seen_b, "B")]:
                await until(lambda s=s: s.count(types.ResourceListChangedNotification) >= 1, f"session {name} gets resources/list_changed")
                await until(lambda s=s: s.count(types.PromptListChangedNotification) >= 1, f"session {name} gets prompts/list_changed")
            names = [p.name for p in (await b.list_prompts()).prompts]
            check("sc__fresh" in names, "the new prompt is listed", names)

            # an upstream's log message during a call reaches that call's session only, cleaned
            await a.set_logging_level("debug")
            await b.set_logging_level("debug")
            r = await a.call_tool("sc__chatty", {"text": "for A"})
            check(not r.is_error, "the upstream logs while it serves A's call", text_of(r))
            await until(lambda: seen_a.logs("sc") != [], "session A gets the upstream's log message")
            m = seen_a.logs("sc")[0]
            check(m.logger == "sc/scripted" and m.level == "warning", "its logger is namespaced with the upstream, its level kept", m)
            check(m.data == "upstream says evil for A", "bidi and invisible characters are removed", repr(m.data))
            await anyio.sleep(0.5)
            check(seen_b.logs("sc") == [], "session B gets none of it", seen_b.logs("sc"))
            await a.set_logging_level("error")
            await a.call_tool("sc__chatty", {"text": "quiet"})
            await anyio.sleep(0.5)
            check(len(seen_a.logs("sc")) == 1, "a message below the level A asked for is not sent", seen_a.logs("sc"))

            await a.unsubscribe_resource("sc+notes://a")
            check(True, "session A unsubscribes")
            before = len(seen_a.updated())
            await touch(b, "notes://a")
            await anyio.sleep(0.5)
            check(len(seen_a.updated()) == before, "no update after unsubscribing", seen_a.updated())

            await b.subscribe_resource("sc+notes://c")
            check(True, "session B subscribes to sc+notes://c and ends without unsubscribing")


def main() -> None:
    p = argparse.ArgumentParser()
    add_server_args(p)
    p.add_argument("--prompts", required=True)
    run_client(relay, p.parse_args(), 120, "relay")


if __name__ == "__main__":
    main()
