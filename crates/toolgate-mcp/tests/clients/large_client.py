"""Large results through the official Python MCP SDK (`mcp`): every built-in whose result can
pass its byte cap reaches the client as a result the SDK accepts (structured content that
conforms to the listed outputSchema, which the SDK checks), and the model can read the rest.

Run by crates/toolgate-mcp/tests/cases/large_results.rs on a workspace it prepared:
`many/` holds 1,200 files with long names, `deep/` 1,200 files under long directory names,
`matches.txt` 1,000 lines with a needle, `controls.txt` lines of control characters (which
grow fourfold once escaped), `edit.txt` 10 lines of 3,000 control characters ending in `x`. Exits 0 when every check holds, printing `ok: ...` per check.

  large_client.py --mode legacy|2026-07-28|auto --workspace DIR
                  (--stdio JSON_ARGV | --url URL [--token TOKEN])

Checks, per tool (list_dir, glob, search_code, read_file, edit_file): the call succeeds
(the SDK raised nothing), the text block is within the cap, the structured content has a
`truncation` record whose handle and offset `read_result` reads on from, and the pages put
together are the whole result. The text block is the JSON of the structured content, except
read_file's: its numbered lines, cut to a preview whose marker names the handle of the whole
text. run_shell's long output (control characters included, counted once escaped) is cut
to its own preview, which fits the cap, keeps both ends and names its own handle and offset; its timeout stops the script before its next step. A `read_result` page
of the largest size keeps the whole message near half a megabyte.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import anyio
import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of

CAP = 64 * 1024


def structured(result: types.CallToolResult, what: str) -> dict:
    check(not result.is_error, f"{what}: the call succeeds", text_of(result)[:500])
    s = result.structured_content
    check(isinstance(s, dict), f"{what}: structured content is there", result)
    return s


async def read_all(client, handle: str) -> str:
    """Every page of a stored result, put together."""
    text, offset = "", 0
    while True:
        page = structured(await client.call_tool("read_result", {"handle": handle, "offset": offset, "limit": 262144}), "read_result")
        text += page["text"]
        if page.get("next_offset") is None:
            return text
        offset = page["next_offset"]


async def cut_to_cap(client, name: str, arguments: dict, pointer: str, result=None) -> dict:
    """Calls `name` (unless its `result` is given), whose result passes the cap, and checks what
    the model gets."""
    result = result or await client.call_tool(name, arguments)
    s = structured(result, name)
    text = text_of(result)
    check(len(text.encode()) <= CAP, f"{name}: the text is within the cap", len(text.encode()))
    if name != "read_file":
        check(json.loads(text) == s, f"{name}: the text is the JSON of the structured content")
    t = s.get("truncation")
    check(isinstance(t, dict) and t["handle"].startswith("res_"), f"{name}: a truncation record with a handle", t)
    pointers = [o["pointer"] for o in t["omitted"]]
    check(pointer in pointers, f"{name}: {pointer} was shortened", pointers)
    check("read_result" in t["message"] and t["handle"] in t["message"], f"{name}: the message says how to read on", t["message"])
    first = t["omitted"][0]
    page = structured(await client.call_tool("read_result", {"handle": t["handle"], "offset": first["offset"], "limit": 300}), "read_result")
    check(page["offset"] == first["offset"], f"{name}: read_result reads on from the offset named", page)
    full = json.loads(await read_all(client, t["handle"]))
    check(full.get("truncation") is None and isinstance(full, dict), f"{name}: the stored result is the whole value")
    return full


async def large(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    asked: list[str] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with make_client(args, 120, elicitation_callback=on_elicit) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        for name in ["list_dir", "glob", "search_code", "read_file", "read_result", "run_shell"]:
            schema = listed[name].output_schema or {}
            check("truncation" in schema.get("properties", {}), f"{name}'s outputSchema admits the truncation record")
            check("uint" not in json.dumps(schema) and "uint" not in json.dumps(listed[name].input_schema), f"{name}'s schemas use no uint formats")

        full = await cut_to_cap(client, "list_dir", {"path": "many"}, "/entries")
        check(len(full["entries"]) == 1000 and full["total_entries"] == 1200, "list_dir: the full result has every listed entry", full["total_entries"])

        full = await cut_to_cap(client, "glob", {"pattern": "**/*.txt", "path": "deep"}, "/paths")
        check(len(full["paths"]) == 1000 and full["total_matches"] == 1200, "glob: the full result has every path", full["total_matches"])

        full = await cut_to_cap(client, "search_code", {"pattern": "NEEDLE", "max_matches": 1000}, "/matches")
        check(len(full["matches"]) == 1000, "search_code: the full result has 1,000 matches", len(full["matches"]))

        read = await client.call_tool("read_file", {"path": "controls.txt"})
        full = await cut_to_cap(client, "read_file", {}, "/content", read)
        check(full["content"].startswith("     1\t\\x01"), "read_file: the full content, controls made visible", full["content"][:40])
        # the text is the numbered lines (not their JSON), a preview naming its own handle
        text = text_of(read)
        check(text.startswith("     1\t\\x01") and text.endswith("\\x01"), "read_file: the text is a preview of the lines", text[:40])
        marker = text[text.index("read_result {") + 12 :]
        call = json.loads(marker[: marker.index("}") + 1])
        whole = await read_all(client, call["handle"])
        check(whole == full["content"], "read_file: the text's handle keeps every line, controls made visible", len(whole))

        # run_shell: output of control characters is cut to its preview once escaped, so the
        # result fits the cap without being cut again, and the preview keeps both ends
        result = await client.call_tool("run_shell", {"command": "head -c 30000 /dev/zero | tr '\\0' '\\1'; echo; echo END"})
        s = structured(result, "run_shell")
        check(len(text_of(result).encode()) <= CAP, "run_shell: the text is within the cap", len(text_of(result).encode()))
        check(s.get("truncation") is None, "run_shell: its own preview fits, nothing is cut after it", s.get("truncation"))
        stdout = s["stdout"]
        check(len(stdout.encode()) <= 24 << 10 and stdout.startswith("\\x01") and stdout.endswith("END\n"), "run_shell: the preview keeps both ends", stdout[-40:])
        whole = await read_all(client, s["stdout_handle"])
        check(whole.endswith("END\n") and whole.count("\\x01") == 30000, "run_shell: its handle keeps every byte, controls made visible", len(whole))
        check(len(asked) == 1 and "run_shell" in asked[0], "run_shell was approved through elicitation", asked)

        # edit_file: a diff of long lines of control characters passes the cap once escaped
        old = (ws / "edit.txt").read_text()
        full = await cut_to_cap(client, "edit_file", {"path": "edit.txt", "old_string": old, "new_string": old.replace("x", "y")}, "/diff")
        check(full["diff"].startswith("--- a/edit.txt") and len(full["diff"]) > 30000 and full["replacements"] == 1, "edit_file: the stored result is the whole diff", full["diff"][:40])
        check((ws / "edit.txt").read_text() == old.replace("x", "y"), "edit_file: the edit was made")

        # run_shell keeps the tail of long output, and its marker names a handle and offset
        tests = "for i in $(seq 150); do echo \"FAIL: test_$i (tests.Case)\"; printf '%0400d\\n' 0; done; echo 'FAILED (failures=150)'"
        run = structured(await client.call_tool("run_shell", {"command": tests}), "run_shell long output")
        check(run["stdout"].endswith("FAILED (failures=150)\n"), "run_shell: the end of 63 KB of output is shown", run["stdout"][-80:])
        marker = run["stdout"][run["stdout"].index("read_result {") + 12 :]
        call = json.loads(marker[: marker.index("}") + 1])
        check(call["handle"] == run["stdout_handle"], "run_shell: the marker names the stdout handle", call)
        page = structured(await client.call_tool("read_result", {**call, "limit": 200}), "read_result of stdout")
        check(page["text"].startswith("FAIL: test_") or page["text"].startswith("0"), "run_shell: the marker's offset reads on in the output", page["text"][:60])

        # a timeout stops the script before its next step, and says so
        started = time.monotonic()
        timed = await client.call_tool("run_shell", {"command": "sleep 5; touch late.txt", "timeout_ms": 1000})
        check(timed.is_error is True and "outcome_unknown" in text_of(timed), "run_shell: a timeout is an isError result", text_of(timed))
        check("started no further step" in text_of(timed), "run_shell: the message says the script was stopped", text_of(timed))
        check(time.monotonic() - started < 5, "run_shell: the call returned at its timeout", time.monotonic() - started)
        await anyio.sleep(5)
        check(not (ws / "late.txt").exists(), "run_shell: the next step of the script never ran")

        # the largest read_result page keeps the message near half a megabyte
        big = structured(await client.call_tool("search_code", {"pattern": "NEEDLE", "max_matches": 5000, "context": 2}), "a large search")
        handle = big["truncation"]["handle"]
        page = await client.call_tool("read_result", {"handle": handle, "limit": 262144})
        message = len(page.model_dump_json(by_alias=True, exclude_none=True).encode())
        check(not page.is_error and message < 600_000, "read_result: a page of the largest size is a bounded message", message)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workspace", required=True)
    add_server_args(p)
    args = p.parse_args()
    run_client(large, args, 240, f"large ({args.mode})")


if __name__ == "__main__":
    main()
