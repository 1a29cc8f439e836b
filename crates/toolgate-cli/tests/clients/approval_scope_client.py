"""Approvals over MCP show everything they approve and grant only that (issue 12, item 6),
with the official Python SDK (`mcp`) answering the form, against `toolgate serve` over stdio.

Run by crates/toolgate-cli/tests/cli/approval_scope.rs, which checks the workspace afterwards
(nothing created or removed, the grant, the audit). Exits 0 when every check holds, printing
one `ok: ...` line per check and `passed: approval scope`.

  approval_scope_client.py --mode legacy|2026-07-28 --stdio JSON_ARGV

1. a line of 21 harmless commands and `touch x`: the question names every command, `touch x`
   included (not the line's first 120 characters); declined;
2. a shell line read without certainty (`bash <<EOF` whose `touch pwned` lies far past the
   first 120 characters): the question shows the line whole and offers only `once`; declined;
3. `python3 -m unittest -q` approved for the session: it runs again without a question, while
   `rm -rf victim`, the same test run followed by `rm -rf victim`, and a `python3 -c` that
   removes it are each asked (declined).
"""

from __future__ import annotations

import argparse

import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of


async def run(args: argparse.Namespace) -> None:
    asked: list[tuple[str, list]] = []
    answers: list[dict] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        scope = params.requested_schema.get("properties", {}).get("scope", {})
        offered = [o.get("const") for o in scope.get("oneOf", [])]
        asked.append((params.message, offered))
        if not answers:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=answers.pop(0))

    async def shell(c, command: str):
        return await c.call_tool("run_shell", {"command": command})

    async with make_client(args, 60, elicitation_callback=on_elicit) as c:
        echoes = " && ".join(f"echo {i}" for i in range(21))
        r = await shell(c, f"{echoes} && touch x")
        check(r.is_error, "the line of 21 commands and touch x, declined, does not run", text_of(r))
        message, offered = asked[-1]
        check("\n  command touch x\n" in message, "the question names touch x", message)
        check(
            all(f"\n  command echo {i}\n" in message for i in range(21)),
            "the question names each of the 21 echo commands",
            message,
        )
        check("session" in offered, "a line it can name offers session", offered)

        body = "\n".join([f"echo {i} padding the line past what a summary shows" for i in range(12)])
        r = await shell(c, f"bash <<EOF\n{body}\ntouch pwned\nEOF")
        check(r.is_error, "the uncertain heredoc, declined, does not run", text_of(r))
        message, offered = asked[-1]
        check("\n  | touch pwned\n" in message, "the question shows the heredoc's touch pwned", message)
        check("\n  | command: bash <<EOF\n" in message, "the question shows the line from its start", message)
        check(
            "session" not in offered and "always" not in offered,
            "a line it cannot read with certainty offers only once",
            offered,
        )

        answers.append({"approve": True, "scope": "session"})
        r = await shell(c, "python3 -m unittest -q")
        check(not r.is_error, "python3 -m unittest runs, approved for the session", text_of(r))
        message, _ = asked[-1]
        check(
            "covers run_shell on command:python3 -m unittest -q only" in message,
            "the question says the session grant covers that command only",
            message,
        )
        n = len(asked)
        r = await shell(c, "python3 -m unittest -q")
        check(not r.is_error and len(asked) == n, "the same command runs again unasked", len(asked))
        for other in [
            "rm -rf victim",
            "python3 -m unittest -q && rm -rf victim",
            "python3 -c 'import shutil; shutil.rmtree(\"victim\")'",
        ]:
            r = await shell(c, other)
            check(r.is_error and len(asked) == n + 1, f"{other!r} is asked, not granted", text_of(r))
            n += 1


def main() -> None:
    p = argparse.ArgumentParser()
    add_server_args(p)
    args = p.parse_args()
    run_client(run, args, 120, "approval scope")


if __name__ == "__main__":
    main()
