"""What a model and its user meet in their first hour, through the official Python MCP SDK.

Run by crates/toolgate-mcp/tests/cases/first_hour.rs against toolgate-mcp-test-server started
with --write-tools (and, for `stateless`, --max-calls 4); exits 0 when every check holds.

  first_hour_client.py --scenario NAME --mode legacy|2026-07-28 --workspace DIR
                       (--stdio JSON_ARGV | --url URL [--token TOKEN])

Scenarios:
  checks     calls bound to fail (edit_file without a match or with several, a missing file,
             write_file onto a directory, run_shell in a cwd that does not exist) come back at
             once as isError results and nobody is asked; a call that can run is asked with
             a unified diff of the change, escaped
  answers    a rejection tells the model nothing changed and to ask the user, without the
             policy's rule in its text (the rule is in _meta); an approval form answered with
             something it does not allow is asked again, saying what was wrong, and then runs
  arguments  an unknown argument names the close one; a type error says what was expected and
             what came; a missing file names the near path; an unknown tool names the tools
  no-elicit  a client without elicitation: the model is told nobody could be asked and how
             the operator allows such calls
  stateless  2026-07-28 over HTTP: the budget of --max-calls 4 holds across the stateless
             requests of one caller, and a read_result handle from one request reads in the
             next
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re

import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of
from mcp.shared.exceptions import MCPError

ESC = "\x1b"


def meta_error(result: types.CallToolResult) -> dict:
    meta = result.meta or {}
    return meta.get("toolgate/error", {})


async def checks(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    (ws / "dir").mkdir(exist_ok=True)
    (ws / "twice.txt").write_text("same\nsame\n")
    asked: list[str] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with make_client(args, 60, elicitation_callback=on_elicit) as client:
        bound_to_fail = [
            ("edit_file", {"path": "src/lib.txt", "old_string": "no such text", "new_string": "x"}, "no_match"),
            ("edit_file", {"path": "twice.txt", "old_string": "same", "new_string": "x"}, "ambiguous_match"),
            ("edit_file", {"path": "src/missing.txt", "old_string": "a", "new_string": "b"}, "not_found"),
            ("write_file", {"path": "dir", "content": "x"}, "is_a_directory"),
            ("run_shell", {"command": "touch made", "cwd": "no/such/dir"}, "not_found"),
        ]
        for tool, arguments, reason in bound_to_fail:
            r = await client.call_tool(tool, arguments)
            check(r.is_error is True, f"{tool} {reason} is an isError result", text_of(r))
            check(meta_error(r).get("reason") == reason, f"{tool}: reason {reason}", meta_error(r))
            check(not asked, f"{tool} {reason}: nobody was asked", asked)
        check(not (ws / "made").exists(), "run_shell ran nothing")
        check((ws / "twice.txt").read_text() == "same\nsame\n", "nothing was edited")

        edit = {"path": "src/lib.txt", "old_string": "a needle", "new_string": f"a {ESC}[2Jpin"}
        r = await client.call_tool("edit_file", edit)
        check(not r.is_error, "an edit that can run runs once approved", text_of(r))
        check(len(asked) == 1, "one question for it", asked)
        question = asked[0]
        check("Change:" in question, "the question shows the change", question)
        check("-a needle in a haystack" in question, "the diff shows the old line", question)
        check("+a \\u{1b}[2Jpin in a haystack" in question, "the new line, escaped", question)
        check(ESC not in question, "no escape character reaches the question", repr(question))
        check("old_string" in question, "and the arguments", question)


async def answers(args: argparse.Namespace) -> None:
    script: list[types.ElicitResult] = []
    asked: list[str] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.message)
        return script.pop(0)

    async with make_client(args, 60, elicitation_callback=on_elicit) as client:
        script.append(types.ElicitResult(action="decline"))
        no = await client.call_tool("destructive_echo", {"text": "one"})
        text = text_of(no)
        check(no.is_error is True and "approval_rejected" in text, "decline rejects", text)
        check("nothing was changed" in text, "the model reads that nothing changed", text)
        check("ask the user how to go on" in text, "and to ask the user", text)
        check("default.destructive_asks" not in text and "risk." not in text, "no rule jargon in its text", text)
        err = meta_error(no)
        check(err.get("reason") == "not_approved", "reason not_approved", err)
        check(err.get("rule") == "default.destructive_asks", "the rule is in _meta", err)

        # an answer the form does not allow: asked again, saying what was wrong
        script.append(types.ElicitResult(action="accept", content={"approve": True, "scope": "forever"}))
        script.append(types.ElicitResult(action="accept", content={"approve": True}))
        ok = await client.call_tool("destructive_echo", {"text": "two"})
        check(not ok.is_error, "the call runs after a valid answer", text_of(ok))
        check(len(asked) == 3, "the question was asked again", asked)
        check(asked[2].startswith("Your answer could not be used:"), "it says the answer was not used", asked[2])
        check("forever" in asked[2], "and what was wrong with it", asked[2])
        check("destructive_echo" in asked[2], "and asks the same question", asked[2])

        # three answers the form does not allow: rejected, the person having been told each time
        for _ in range(3):
            script.append(types.ElicitResult(action="accept", content={"approve": "yes"}))
        no = await client.call_tool("destructive_echo", {"text": "three"})
        check(no.is_error is True and "approval_rejected" in text_of(no), "three invalid answers reject", text_of(no))
        check(len(asked) == 6, "each was asked again", asked)
        check(all(q.startswith("Your answer could not be used:") for q in asked[4:6]), "each said why", asked)


async def arguments(args: argparse.Namespace) -> None:
    async with make_client(args, 60) as client:
        r = await client.call_tool("read_file", {"path": "src/lib.txt", "limt": 3})
        check(r.is_error is True, "an unknown argument is an isError result", text_of(r))
        check("did you mean `limit`?" in text_of(r), "it names the close one", text_of(r))
        r = await client.call_tool("read_file", {"path": "src/lib.txt", "limit": "3"})
        check('expected an integer (or null), got the string "3"' in text_of(r), "a type error says what came", text_of(r))
        check("send 3 without quotes" in text_of(r), "and what to send", text_of(r))
        r = await client.call_tool("read_file", {"path": "src/lib.tx"})
        check('did you mean "src/lib.txt"?' in text_of(r), "a missing file names the near one", text_of(r))
        check('"**/lib.tx"' in text_of(r), "and a glob for its name", text_of(r))
        r = await client.call_tool("search_code", {"pattern": "fn ("})
        check("(?:" not in text_of(r) and "unclosed group" in text_of(r), "a regex error is about the pattern sent", text_of(r))
        try:
            await client.call_tool("read_fil", {"path": "src/lib.txt"})
            check(False, "an unknown tool is a protocol error (every revision of the specification)")
        except MCPError as e:
            check(e.error.code == -32602, "JSON-RPC -32602", e.error)
            check("did you mean read_file?" in e.error.message, "it names the close tool", e.error.message)
            check("read_result" in e.error.message and "list_dir" in e.error.message, "and the tools there are", e.error.message)
            data = e.error.data or {}
            check("read_file" in data.get("available", []), "data lists them too", data)


async def no_elicit(args: argparse.Namespace) -> None:
    async with make_client(args, 60) as client:
        r = await client.call_tool("destructive_echo", {"text": "x"})
        text = text_of(r)
        check(r.is_error is True and "approval_rejected" in text, "rejected", text)
        check("nobody could be asked" in text, "nobody could be asked", text)
        check("elicitation" in text, "why: the client cannot ask", text)
        check("allow rule" in text and "toolgate approvals grant --tool destructive_echo" in text,
              "how the operator allows such calls", text)
        check(meta_error(r).get("reason") == "nobody_to_ask", "reason nobody_to_ask", meta_error(r))


async def stateless(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    many = ws / "many"
    many.mkdir(exist_ok=True)
    for i in range(1500):
        (many / f"entry-{i:05}-with-a-long-enough-name.txt").write_text("")
    async with make_client(args, 60) as client:
        check(client.protocol_version == "2026-07-28", "2026-07-28, stateless over HTTP", client.protocol_version)
        # the raw request: a truncated list_dir is checked against its outputSchema by the
        # SDK's call_tool, which toolgate's truncation does not meet yet (issue 11, item 1)
        big = await client.session.send_request(
            types.CallToolRequest(params=types.CallToolRequestParams(name="list_dir", arguments={"path": "many"})),
            types.CallToolResult,
        )
        dumped = json.dumps(big.model_dump(by_alias=True))
        handles = re.findall(r"res_[0-9a-f]{32}", dumped)
        check(bool(handles), "a truncated result names its handle", dumped[:500])
        page = await client.call_tool("read_result", {"handle": handles[0], "offset": 0, "limit": 200})
        check(not page.is_error, "the handle reads in the caller's next request", text_of(page))
        check("entry-00000" in (page.structured_content or {}).get("text", ""), "the page is the full result's", page)
        third = await client.call_tool("read_file", {"path": "src/lib.txt"})
        check(not third.is_error, "third call", text_of(third))
        fourth = await client.call_tool("read_file", {"path": "src/lib.txt"})
        check(not fourth.is_error, "fourth call", text_of(fourth))
        fifth = await client.call_tool("read_file", {"path": "src/lib.txt"})
        check(fifth.is_error is True and "budget_exhausted" in text_of(fifth),
              "the fifth call is over the budget of 4, across requests", text_of(fifth))
    # a new client of the same caller (same token) is still over the budget
    async with make_client(args, 60) as client:
        again = await client.call_tool("read_file", {"path": "src/lib.txt"})
        check(again.is_error is True and "budget_exhausted" in text_of(again),
              "the caller's budget holds for a new client too", text_of(again))


SCENARIOS = {
    "checks": checks,
    "answers": answers,
    "arguments": arguments,
    "no-elicit": no_elicit,
    "stateless": stateless,
}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    p.add_argument("--workspace", required=True)
    add_server_args(p)
    args = p.parse_args()
    run_client(SCENARIOS[args.scenario], args, 150, f"{args.scenario} ({args.mode})")


if __name__ == "__main__":
    main()
