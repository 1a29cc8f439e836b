"""A small MCP stdio server for the gateway's tests, speaking newline-delimited JSON-RPC by
hand (no SDK), so it can also misbehave on purpose.

  scripted_server.py --tools FILE [--mode ok|crash|hang|flood|garbage|noinit] [--log FILE]
                    [--prompts FILE] [--resources FILE]

Its tools are the JSON array in FILE (MCP tool definitions), read again whenever the file
changes; a change is announced with `notifications/tools/list_changed`. Calls: `add` answers
the sum of `a` and `b` as text, `say` its `text` as the text itself (`<LONE>` in it sent as a
lone UTF-16 surrogate escape, `\\ud83d`, as a JavaScript server cutting a string inside an
emoji writes it), `deep` a result whose structured content nests arrays 300 deep, `fail`
answers an error result; any other tool echoes its arguments. With --log, every `tools/call`
received is appended to FILE first, one JSON line (`name`, `arguments`, and `key`: the `_meta`
idempotency key toolgate sends, or null). Modes:

- ok: behaves;
- crash: `add` with a == 13 makes the process exit at once (status 3);
- hang: answers everything but `tools/call`, which it never answers;
- flood: before each answer writes 256 KiB of noise to stderr and lines that are not JSON to
  stdout (then the answer);
- garbage: answers every request with bytes that are not JSON;
- noinit: reads requests and never answers any.

With --prompts (a JSON array of MCP prompt definitions) it declares prompts: `prompts/get`
answers one user message naming the prompt and its arguments, followed by an ANSI escape (for
the gateway to clean); an unknown prompt is JSON-RPC -32602. With --resources (a JSON array of
MCP resource definitions) it declares resources: `resources/read` of a listed URI answers its
text, `content of URI` and an ANSI escape; any other URI is JSON-RPC -32002 (resource not
found, as servers before SEP-2164 say it). It also declares resource subscriptions:
`resources/subscribe` and `unsubscribe` of a listed URI answer `{}` (each appended to the
--log file as `{"method": ..., "uri": ...}`), of any other URI -32002. The prompts and
resources files are read again on every list.

`getenv` answers the value of the environment variable its `name` argument names, as
`NAME=value` text and as structured content `{"value": ...}`.

Tools that make it talk to its client before answering: `touch` sends
`notifications/resources/updated` for its `uri`; `announce` sends
`notifications/resources/list_changed` and `notifications/prompts/list_changed`; `chatty`
sends a `notifications/message` (level warning) whose text holds a bidi override and a
zero-width space, with its `text` argument (250 ms before its answer); `die` exits at once (status 3), unanswered;
`ask` sends its client the request in its arguments (`method`, `params`), waits for the
answer (reading nothing else meanwhile) and answers the call with that answer's JSON
(`{"result": ...}` or `{"error": ...}`) as text; in the request, `<RLO>` is sent as U+202E
(a bidi override), `<BIG>` as 300,000 `x`, `<LONE>` as a lone UTF-16 surrogate escape
(`\\ud800`, which no JSON reader turns into a string) and `"<DEEP>"` as arrays nested 5000
deep.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

lock = threading.Lock()


def write(obj) -> None:
    line = obj if isinstance(obj, str) else json.dumps(obj)
    with lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tools", required=True)
    p.add_argument("--mode", default="ok")
    p.add_argument("--log")
    p.add_argument("--prompts")
    p.add_argument("--resources")
    args = p.parse_args()
    def reload(path):
        with open(path) as f:
            return json.load(f)

    prompts = reload(args.prompts) if args.prompts else None
    resources = reload(args.resources) if args.resources else None

    def record(entry) -> None:
        if args.log:
            with open(args.log, "a") as f:
                f.write(json.dumps(entry) + "\n")
    mode = args.mode

    def load():
        with open(args.tools) as f:
            return json.load(f)

    state = {"tools": load(), "mtime": os.stat(args.tools).st_mtime_ns, "ready": False}

    def watch() -> None:
        while True:
            time.sleep(0.1)
            try:
                m = os.stat(args.tools).st_mtime_ns
            except OSError:
                continue
            if m != state["mtime"]:
                state["mtime"] = m
                try:
                    state["tools"] = load()
                except ValueError:
                    continue
                if state["ready"]:
                    write({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    threading.Thread(target=watch, daemon=True).start()

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            if msg.get("method") == "notifications/initialized":
                state["ready"] = True
            continue
        if mode == "noinit":
            continue
        if mode == "garbage":
            write("this is not JSON-RPC <<<>>> \x01\x02")
            continue
        if mode == "flood":
            sys.stderr.write("noise " * 43690 + "\n")
            sys.stderr.flush()
            for _ in range(50):
                write("garbage line that is not JSON " * 10)
        method, rid = msg["method"], msg["id"]
        if method == "initialize":
            if args.log:
                # each start, beside the log (for a test to tell a restart it did not cause)
                with open(args.log + ".starts", "a") as f:
                    f.write(f"{os.getpid()}\n")
            capabilities = {"tools": {"listChanged": True}}
            if prompts is not None:
                capabilities["prompts"] = {}
            if resources is not None:
                capabilities["resources"] = {"subscribe": True, "listChanged": True}
            if prompts is not None:
                capabilities["prompts"] = {"listChanged": True}
            capabilities["logging"] = {}
            result = {
                "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": capabilities,
                "serverInfo": {"name": "scripted", "version": "1.0.0"},
            }
        elif method == "prompts/list" and prompts is not None:
            prompts = reload(args.prompts)
            result = {"prompts": prompts}
        elif method == "prompts/get" and prompts is not None:
            name = msg["params"]["name"]
            if not any(p["name"] == name for p in prompts):
                write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"no prompt {name}"}})
                continue
            a = json.dumps(msg["params"].get("arguments") or {}, sort_keys=True)
            text = f"prompt {name} with {a}\x1b[31m"
            result = {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
        elif method == "resources/list" and resources is not None:
            resources = reload(args.resources)
            result = {"resources": resources}
        elif method in ("resources/subscribe", "resources/unsubscribe") and resources is not None:
            uri = msg["params"]["uri"]
            if not any(r["uri"] == uri for r in resources):
                write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32002, "message": f"no resource {uri}"}})
                continue
            record({"method": method, "uri": uri})
            result = {}
        elif method == "logging/setLevel":
            result = {}
        elif method == "resources/read" and resources is not None:
            uri = msg["params"]["uri"]
            if not any(r["uri"] == uri for r in resources):
                write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32002, "message": f"no resource {uri}"}})
                continue
            result = {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"content of {uri}\x1b[2J"}]}
        elif method == "tools/list":
            result = {"tools": state["tools"]}
        elif method == "tools/call":
            if mode == "hang":
                continue
            name = msg["params"]["name"]
            a = msg["params"].get("arguments") or {}
            if args.log:
                key = (msg["params"].get("_meta") or {}).get("io.toolgate/idempotency-key")
                with open(args.log, "a") as f:
                    f.write(json.dumps({"name": name, "arguments": a, "key": key}) + "\n")
            if name == "add":
                if mode == "crash" and a.get("a") == 13:
                    os._exit(3)
                result = {"content": [{"type": "text", "text": str(a.get("a", 0) + a.get("b", 0))}]}
            elif name == "getenv":
                value = os.environ.get(a.get("name", ""), "")
                result = {"content": [{"type": "text", "text": f"{a.get('name')}={value}"}],
                          "structuredContent": {"value": value}}
            elif name == "touch":
                write({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": a.get("uri", "")}})
                result = {"content": [{"type": "text", "text": "touched"}]}
            elif name == "announce":
                write({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
                write({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
                result = {"content": [{"type": "text", "text": "announced"}]}
            elif name == "chatty":
                text = "upstream says \u202eevil\u202c\u200b " + str(a.get("text", ""))
                write({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "warning", "logger": "scripted", "data": text}})
                # the message must reach the gateway before the result (README: Gateway)
                time.sleep(0.25)
                result = {"content": [{"type": "text", "text": "chatted"}]}
            elif name == "die":
                os._exit(3)
            elif name == "ask":
                asked = f"ask-{rid}"
                request = json.dumps({"jsonrpc": "2.0", "id": asked, "method": a["method"], "params": a["params"]})
                # what a hostile server writes that a call's arguments would not carry as is
                raw = request.replace("<RLO>", "\\u202e").replace("<BIG>", "x" * 300_000)
                raw = raw.replace("<LONE>", "\\ud800").replace('"<DEEP>"', "[" * 5000 + "]" * 5000)
                write(raw)
                answer = {"error": "the connection closed"}
                for reply in sys.stdin:
                    got = json.loads(reply)
                    if got.get("id") == asked and "method" not in got:
                        answer = {k: got[k] for k in ("result", "error") if k in got}
                        break
                result = {"content": [{"type": "text", "text": json.dumps(answer, sort_keys=True)}]}
            elif name == "say":
                result = {"content": [{"type": "text", "text": str(a.get("text", ""))}]}
            elif name == "deep":
                result = {"content": [{"type": "text", "text": "deep"}], "structuredContent": {"x": "<DEEP>"}}
            elif name == "fail":
                result = {"content": [{"type": "text", "text": "the scripted tool failed"}], "isError": True}
            else:
                result = {"content": [{"type": "text", "text": json.dumps(a, sort_keys=True)}]}
        elif method == "ping":
            result = {}
        else:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
            continue
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result})
        if method == "tools/call" and msg["params"]["name"] in ("say", "deep"):
            # what a hostile or careless server writes that json.dumps would not
            line = line.replace("<LONE>", "\\ud83d").replace('"<DEEP>"', "[" * 300 + "]" * 300)
        write(line)


if __name__ == "__main__":
    main()
