"""An agent's session over MCP with the official Python SDK (`mcp`), against `toolgate serve`.

Run by crates/toolgate-cli/tests/cli/serve_project.rs on a workspace holding a small Rust
crate whose test fails (`add` subtracts). Exits 0 when every check holds, printing one
`ok: ...` line per check and `passed: project` at the end.

  project_client.py --mode legacy|2026-07-28|auto --workspace DIR
                    (--stdio JSON_ARGV | --url URL [--token TOKEN])

The session: list the tools of a profile with write tools and run_shell; read the file; run
`cargo test --offline` (it fails); an edit that cannot apply changes nothing; the fix returns
its diff; `cargo test --offline` passes; a command that prints over time streams its lines
as progress notifications while it runs. Every destructive call asks the user through
elicitation: accepted for those, declined for `rm -rf src` (nothing is deleted), and approved
false with feedback for another (the model reads the feedback).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of

CARGO_TEST = {"command": "cargo test --offline 2>&1", "timeout_ms": 300000}


async def project(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    lib = ws / "src" / "lib.rs"
    original = lib.read_bytes()
    # the user's answers, in order, and the questions asked
    answers: list[types.ElicitResult] = []
    asked: list[str] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.message)
        if not answers:
            return types.ElicitResult(action="cancel")
        return answers.pop(0)

    def accept() -> None:
        answers.append(types.ElicitResult(action="accept", content={"approve": True}))

    async with make_client(args, 300, elicitation_callback=on_elicit) as client:
        want = "2025-11-25" if args.mode == "legacy" else "2026-07-28"
        check(client.protocol_version == want, f"protocol {want} negotiated", client.protocol_version)
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        for want in ["read_file", "search_code", "write_file", "edit_file", "run_shell"]:
            check(want in tools, f"{want} is in the profile", sorted(tools))
        for name in ["write_file", "edit_file", "run_shell"]:
            a = tools[name].annotations
            check(a is not None and a.destructive_hint is True and a.read_only_hint is False, f"{name} is marked destructive", a)
        check(tools["run_shell"].annotations.open_world_hint is True, "run_shell is marked open-world")

        read = await client.call_tool("read_file", {"path": "src/lib.rs"})
        check(not read.is_error, "read_file succeeds without asking", text_of(read))
        check("a - b" in (read.structured_content or {}).get("content", ""), "the model sees the bug", read.structured_content)
        check(not asked, "reading asked nothing", asked)

        accept()
        failing = await client.call_tool("run_shell", CARGO_TEST)
        check(not failing.is_error, "cargo test runs once approved", text_of(failing))
        s = failing.structured_content or {}
        check(s.get("exit_code") == 101 and "test result: FAILED" in s.get("stdout", ""), "the test fails before the fix", s)
        check(s.get("sandboxed") is True, "it ran in the sandbox", s)
        check(len(asked) == 1 and "run_shell" in asked[0] and "cargo test" in asked[0], "the question names the tool and the command", asked)

        wrong = await client.call_tool("edit_file", {"path": "src/lib.rs", "old_string": "a * b", "new_string": "a + b"})
        check(wrong.is_error is True and "no_match" in text_of(wrong), "an edit that does not match is a recoverable error", text_of(wrong))
        check(lib.read_bytes() == original, "the failed edit changed nothing")
        check(len(asked) == 1, "an edit bound to fail is not even put to the user", asked)

        outside = await client.call_tool("edit_file", {"path": "../outside.rs", "old_string": "a", "new_string": "b"})
        check(outside.is_error is True and "path_outside_workspace" in text_of(outside), "a path outside the workspace is refused", text_of(outside))
        check(len(asked) == 1, "a refused path is not even put to the user", asked)

        accept()
        fixed = await client.call_tool("edit_file", {"path": "src/lib.rs", "old_string": "    a - b\n", "new_string": "    a + b\n"})
        check(not fixed.is_error, "the fix applies", text_of(fixed))
        diff = (fixed.structured_content or {}).get("diff", "")
        check("-    a - b" in diff and "+    a + b" in diff, "the result carries the diff", diff)
        check(lib.read_bytes() == original.replace(b"a - b", b"a + b"), "the file on disk is fixed")
        check("-    a - b" in asked[-1] and "+    a + b" in asked[-1], "the user saw the diff before approving", asked[-1])

        accept()
        passing = await client.call_tool("run_shell", CARGO_TEST)
        s = passing.structured_content or {}
        check(not passing.is_error and s.get("exit_code") == 0, "cargo test passes after the fix", s)
        check("test result: ok. 2 passed; 0 failed" in s.get("stdout", ""), "both tests pass", s.get("stdout"))
        check((ws / "target" / "debug").is_dir(), "the build went to the workspace's target directory")

        # the output of a command that prints over time arrives as progress while it runs:
        # in order, without terminal escapes, a few notifications a second at most
        notes: list[tuple[float, float, str]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            notes.append((time.monotonic(), p, message or ""))

        accept()
        started = time.monotonic()
        streamed = await client.call_tool(
            "run_shell",
            {"command": "for i in 1 2 3 4; do echo step-$i; printf '\\033[1;31mred\\033[0m\\n' >&2; sleep 0.4; done"},
            progress_callback=on_progress,
        )
        ended = time.monotonic()
        check(not streamed.is_error and (streamed.structured_content or {}).get("exit_code") == 0, "the printing command succeeds", text_of(streamed))
        lines = [l for _, _, m in notes for l in m.splitlines() if not l.startswith("run_shell is still running")]
        # (stdout and stderr are two pipes: their lines interleave as they are read)
        out = [l for l in lines if not l.startswith("[stderr] ")]
        err = [l for l in lines if l.startswith("[stderr] ")]
        check(out == ["step-1", "step-2", "step-3", "step-4"], "its output lines arrive as progress, in order", notes)
        check(err == ["[stderr] red"] * 4, "standard error's lines arrive marked", notes)
        check(all("\x1b" not in m for _, _, m in notes), "without terminal escapes", notes)
        check(notes and ended - notes[0][0] > 0.6, "the first lines arrive while the command runs", (started, notes, ended))
        check(len(notes) <= (ended - started) * 4 + 3, "at most a few notifications a second", len(notes))
        values = [p for _, p, _ in notes]
        check(values == sorted(values) and len(set(values)) == len(values), "progress only grows", values)

        answers.append(types.ElicitResult(action="decline"))
        rm = await client.call_tool("run_shell", {"command": "rm -rf src"})
        check(rm.is_error is True and "approval_rejected" in text_of(rm), "the user declines a destructive command", text_of(rm))
        check("rm -rf src" in asked[-1], "the user saw the command", asked[-1])
        check(lib.exists(), "nothing was deleted")

        answers.append(types.ElicitResult(action="accept", content={"approve": False, "feedback": "run only the tests, with -q"}))
        corrected = await client.call_tool("write_file", {"path": "src/lib.rs", "content": ""})
        check(corrected.is_error is True and "approval_corrected" in text_of(corrected), "approve false corrects the call", text_of(corrected))
        check("run only the tests, with -q" in text_of(corrected), "the model reads the feedback", text_of(corrected))
        check(lib.read_bytes() == original.replace(b"a - b", b"a + b"), "the corrected write did not happen")
        check(not answers, "every prepared answer was used", answers)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workspace", required=True)
    add_server_args(p)
    args = p.parse_args()
    run_client(project, args, 240, f"project ({args.mode})")


if __name__ == "__main__":
    main()
