"""The official Python MCP SDK (`mcp`) against toolgate's MCP server.

Run by crates/toolgate-mcp/tests/all.rs; exits 0 when every check of the scenario holds, and
prints one `ok: ...` line per check.

  mcp_client.py --scenario NAME --mode legacy|2026-07-28 --workspace DIR
                (--stdio JSON_ARGV | --url URL [--token TOKEN])

Scenarios:
  basic     list tools (order, annotations, outputSchema), search_code and read_file, a
            recoverable error (path outside the workspace, bad arguments) and the session goes
            on, an unknown tool is JSON-RPC -32602, ping, logging
  long      progress notifications during a long call; a cancelled call stops on the server
            (its audit record says cancelled) and the session goes on
  approve   approval through elicitation: accept runs the call, decline rejects it, approve
            false with feedback corrects it
  no-elicit the client has no elicitation capability: the call is rejected (non-interactive)
  scoped    the approval form offers a scope: answered "session", the next call of the
            session is not asked and a fresh session is; a stateless 2026-07-28 HTTP request
            is not offered "session" (its calls run in the caller's session, shared by every client
            with its token), so "once" is asked each time
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import anyio
import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of
from mcp.shared.exceptions import MCPError


async def basic(args: argparse.Namespace) -> None:
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with make_client(args, 60, logging_callback=on_log) as client:
        check(client.server_info is None or client.server_info.name == "toolgate", "server name")
        modern = args.mode != "legacy"
        check(
            (client.protocol_version == "2026-07-28") == modern,
            f"negotiated protocol version {client.protocol_version}",
        )
        listed = await client.list_tools()
        names = [t.name for t in listed.tools]
        check(names == sorted(names), "tools sorted by name", names)
        for want in ["glob", "list_dir", "read_file", "read_result", "search_code"]:
            check(want in names, f"{want} listed", names)
        rf = next(t for t in listed.tools if t.name == "read_file")
        a = rf.annotations
        check(
            a is not None
            and a.read_only_hint is True
            and a.destructive_hint is False
            and a.idempotent_hint is True
            and a.open_world_hint is False,
            "read_file annotations carry all four hints",
            a,
        )
        check(rf.output_schema is not None, "read_file has an outputSchema")
        check(rf.input_schema.get("type") == "object", "read_file inputSchema is an object schema")

        found = await client.call_tool("search_code", {"pattern": "needle"})
        check(not found.is_error, "search_code succeeds", text_of(found))
        sc = found.structured_content or {}
        paths = [m.get("path") for m in sc.get("matches", [])]
        check("src/lib.txt" in paths, "search_code finds the needle", sc)
        check("needle" in text_of(found), "search_code has a text rendering")

        read = await client.call_tool("read_file", {"path": "src/lib.txt"})
        check(not read.is_error, "read_file succeeds", text_of(read))
        check("a needle in a haystack" in (read.structured_content or {}).get("content", ""), "read_file content")
        check(text_of(read) == "     1\ta needle in a haystack", "the model reads the numbered lines, not their JSON", text_of(read))

        outside = await client.call_tool("read_file", {"path": "../outside.txt"})
        check(outside.is_error is True, "a path outside the workspace is an isError result")
        check("path_outside_workspace" in text_of(outside), "the error says why", text_of(outside))

        bad = await client.call_tool("read_file", {"path": 7})
        check(bad.is_error is True, "bad arguments are an isError result")
        check("invalid_arguments" in text_of(bad) and "/path" in text_of(bad), "the error names the argument", text_of(bad))

        try:
            await client.call_tool("no_such_tool", {})
            check(False, "an unknown tool is a protocol error")
        except MCPError as e:
            check(e.error.code == -32602, "an unknown tool is JSON-RPC -32602", e.error)

        again = await client.call_tool("read_file", {"path": "src/lib.txt", "limit": 1})
        check(not again.is_error, "the session goes on after errors", text_of(again))

        if args.mode == "legacy":
            await client.send_ping()
            check(True, "ping")
            await client.set_logging_level("debug")
            await client.call_tool("list_dir", {"path": "."})
            for _ in range(50):
                if logs:
                    break
                await anyio.sleep(0.05)
            check(any(l.logger == "toolgate" for l in logs), "log messages after logging/setLevel", logs)


async def long(args: argparse.Namespace) -> None:
    progress: list[float] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append(p)

    async with make_client(args, 60) as client:
        done = await client.call_tool("slow", {"seconds": 1.6}, progress_callback=on_progress)
        check(not done.is_error, "slow call completes", text_of(done))
        check(len(progress) >= 1, "progress notifications while it runs", progress)
        check(progress == sorted(progress), "progress only grows", progress)

        reports: list[tuple[float, float | None, str | None]] = []

        async def on_step(p: float, total: float | None, message: str | None) -> None:
            reports.append((p, total, message))

        stepped = await client.call_tool("steps", {"count": 4}, progress_callback=on_step)
        check(not stepped.is_error, "a tool that reports progress completes", text_of(stepped))
        check((stepped.structured_content or {}).get("reported") == 4, "the tool reported four steps", stepped)
        check(
            [(p, t) for p, t, _ in reports] == [(1, 4), (2, 4), (3, 4), (4, 4)],
            "the client received the tool's own progress",
            reports,
        )

        started = time.monotonic()
        with anyio.move_on_after(0.8):
            await client.call_tool("slow", {"seconds": 30})
            check(False, "the long call was cancelled by the client")
        check(time.monotonic() - started < 5, "the client cancelled after 0.8 s")

        after = await client.call_tool("read_file", {"path": "src/lib.txt"})
        check(not after.is_error, "the session goes on after a cancelled call", text_of(after))

    audit = pathlib.Path(args.workspace) / ".toolgate" / "audit.jsonl"
    record = None
    for _ in range(100):
        if audit.exists():
            for line in audit.read_text().splitlines():
                r = json.loads(line)
                if r.get("tool") == "slow" and r.get("error_kind") == "cancelled":
                    record = r
        if record:
            break
        await anyio.sleep(0.1)
    check(record is not None, "the server recorded the slow call as cancelled", audit.read_text() if audit.exists() else "no audit log")
    check(record["duration_us"] < 10_000_000, "it stopped well before its 30 s", record)


async def approve(args: argparse.Namespace) -> None:
    answers: list[types.ElicitResult] = []
    asked: list[str] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.message)
        check("approve" in json.dumps(params.requested_schema), "the form has an approve field", params.requested_schema)
        return answers.pop(0)

    async with make_client(args, 60, elicitation_callback=on_elicit) as client:
        answers.append(types.ElicitResult(action="accept", content={"approve": True}))
        ok = await client.call_tool("destructive_echo", {"text": "hello there"})
        check(not ok.is_error, "accept runs the call", text_of(ok))
        check((ok.structured_content or {}).get("text") == "hello there", "the call ran with its arguments", ok)
        check(asked and "destructive_echo" in asked[-1], "the question names the tool", asked)
        check(asked and "hello there" in asked[-1], "the question summarises the arguments", asked)

        answers.append(types.ElicitResult(action="decline"))
        no = await client.call_tool("destructive_echo", {"text": "second"})
        check(no.is_error is True and "approval_rejected" in text_of(no), "decline rejects the call", text_of(no))

        answers.append(types.ElicitResult(action="accept", content={"approve": False, "feedback": "echo 'bye' instead"}))
        fix = await client.call_tool("destructive_echo", {"text": "third"})
        check(fix.is_error is True and "approval_corrected" in text_of(fix), "feedback corrects the call", text_of(fix))
        check("echo 'bye' instead" in text_of(fix), "the model reads the feedback", text_of(fix))
        check(len(asked) == 3, "one question per call", asked)


async def no_elicit(args: argparse.Namespace) -> None:
    async with make_client(args, 60) as client:
        r = await client.call_tool("destructive_echo", {"text": "x"})
        check(r.is_error is True and "approval_rejected" in text_of(r), "without elicitation the call is rejected", text_of(r))
        ok = await client.call_tool("read_file", {"path": "src/lib.txt"})
        check(not ok.is_error, "calls that need no approval still run", text_of(ok))


async def scoped(args: argparse.Namespace) -> None:
    asked: list[str] = []
    offered: list[list[str]] = []
    stateless = bool(args.url) and args.mode != "legacy"

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.message)
        scope = params.requested_schema.get("properties", {}).get("scope", {})
        offered.append([c.get("const") for c in scope.get("oneOf", [])])
        return types.ElicitResult(
            action="accept", content={"approve": True, "scope": "once" if stateless else "session"}
        )

    async with make_client(args, 60, elicitation_callback=on_elicit) as client:
        first = await client.call_tool("destructive_echo", {"text": "one"})
        check(not first.is_error, "the first call is approved", text_of(first))
        second = await client.call_tool("destructive_echo", {"text": "two"})
        check(not second.is_error, "the second call runs", text_of(second))
        if stateless:
            check(offered[0] == ["once", "always"], "a stateless request is offered once and always", offered)
            check(len(asked) == 2, "approved once, the second call is asked again", asked)
        else:
            check(offered[0] == ["once", "session", "always"], "the form offers once, session, always", offered)
            check(len(asked) == 1, "approved for the session, the second call is not asked", asked)
    async with make_client(args, 60, elicitation_callback=on_elicit) as client:
        third = await client.call_tool("destructive_echo", {"text": "three"})
        check(not third.is_error, "a fresh session's call runs", text_of(third))
        check(len(asked) == (3 if stateless else 2), "a fresh session is asked", asked)


SCENARIOS = {"basic": basic, "long": long, "approve": approve, "no-elicit": no_elicit, "scoped": scoped}


async def all_scenarios(args: argparse.Namespace) -> None:
    for name, scenario in SCENARIOS.items():
        await scenario(args)
        print(f"passed: {name} ({args.mode})", flush=True)


SCENARIOS_AND_ALL = {**SCENARIOS, "all": all_scenarios}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", required=True, choices=sorted(SCENARIOS_AND_ALL))
    p.add_argument("--workspace", required=True)
    add_server_args(p)
    args = p.parse_args()
    run_client(SCENARIOS_AND_ALL[args.scenario], args, 120, f"{args.scenario} ({args.mode})")


if __name__ == "__main__":
    main()
