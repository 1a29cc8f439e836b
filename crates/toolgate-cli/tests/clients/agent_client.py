"""An agent's session through `toolgate serve`, with the official Python MCP SDK, checking at
each step the text a model would read (the text blocks of each result).

Run by crates/toolgate-cli/tests/cli/serve_agent.rs on a workspace holding `calc.py` (with a
bug) and `test_calc.py` (150 tests that fail with long output). Exits 0 when every check holds,
printing `ok: ...` per check and `passed: agent` at the end.

  agent_client.py --mode legacy|2026-07-28 --workspace DIR (--stdio JSON_ARGV | --url URL [--token TOKEN])

The steps: list the tools; read calc.py; an edit whose old_string is not in the file; the
corrected edit; run the tests (63 KB of output whose verdict is on its last line) and read on
from the marker's handle and offset; a command that runs past its timeout.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import anyio
import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of


async def agent(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)

    async def approve(context, params) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"approve": True})

    async with make_client(args, 120, elicitation_callback=approve) as client:
        # 1. the tools, as the model reads them
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ["read_file", "edit_file", "run_shell", "read_result"]:
            check(name in tools, f"{name} is offered")
        check("read_result" in tools["run_shell"].description, "run_shell's description says how to read long output")
        check("any size" in tools["read_file"].description, "read_file's description says any size can be read")

        # 2. read the file
        read = await client.call_tool("read_file", {"path": "calc.py"})
        seen = text_of(read)
        check(not read.is_error and "     2\t    return a - b" in seen, "the model sees the numbered lines", seen)
        check(not seen.startswith("{") and read.structured_content["total_lines"] == seen.count("\n") + 1,
              "as plain text, every line of the file and nothing else", seen)

        # 3. an edit that does not apply: the model is told why and what to do
        wrong = await client.call_tool("edit_file", {"path": "calc.py", "old_string": "return a * b", "new_string": "return a + b"})
        seen = text_of(wrong)
        check(wrong.is_error is True and "no_match" in seen, "a failing edit is a recoverable error", seen)
        check("read" in seen.lower(), "it tells the model to read the file again", seen)
        check("return a - b" in (ws / "calc.py").read_text(), "the failing edit changed nothing")

        # 4. the corrected edit returns its diff
        fixed = await client.call_tool("edit_file", {"path": "calc.py", "old_string": "    return a - b\n", "new_string": "    return a + b\n"})
        seen = text_of(fixed)
        diff = json.loads(seen).get("diff", "")
        check(not fixed.is_error and "-    return a - b" in diff and "+    return a + b" in diff, "the corrected edit shows its diff", seen)

        # 5. a long run whose verdict is at the end of 63 KB of output
        run = await client.call_tool("run_shell", {"command": "python3 test_calc.py 2>&1", "timeout_ms": 60000})
        seen = text_of(run)
        check(not run.is_error and len(seen.encode()) <= 65536, "the long run's result is within the cap", len(seen.encode()))
        out = json.loads(seen)
        check(out["exit_code"] == 1 and out["stdout_truncated"] is True, "the model sees a failed, truncated run", {k: out[k] for k in ["exit_code", "stdout_bytes"]})
        check(out["stdout"].rstrip().endswith("FAILED (failures=150)"), "the verdict at the end of the output is shown", out["stdout"][-200:])
        check("FAIL: test_0 " in out["stdout"], "so is the start")
        marker = out["stdout"][out["stdout"].index("read_result {") + 12 :]
        call = json.loads(marker[: marker.index("}") + 1])
        check(call["handle"] == out["stdout_handle"] and call["offset"] > 0, "the marker names the handle and the offset to read on from", call)
        rest = await client.call_tool("read_result", {**call, "limit": 2000})
        page = json.loads(text_of(rest))
        check(not rest.is_error and page["offset"] == call["offset"] and "FAIL: test_" in page["text"], "read_result reads the part left out", page["text"][:200])

        # 6. a command past its timeout is stopped before its next step, and says so
        started = time.monotonic()
        timed = await client.call_tool("run_shell", {"command": "echo working; sleep 5; touch late.txt", "timeout_ms": 1000})
        seen = text_of(timed)
        check(timed.is_error is True and "outcome_unknown" in seen and "timeout" in seen, "a timeout is a recoverable error", seen)
        check("started no further step" in seen and "working" in seen, "it says the script was stopped, with the end of its output", seen)
        check(time.monotonic() - started < 5, "it returned at its timeout", time.monotonic() - started)
        await anyio.sleep(5)
        check(not (ws / "late.txt").exists(), "the step after the timeout never ran")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workspace", required=True)
    add_server_args(p)
    args = p.parse_args()
    run_client(agent, args, 200, "agent")


if __name__ == "__main__":
    main()
