"""A session of the official Python SDK (`mcp`) with `toolgate serve` as a gateway in front of
the scripted upstream `sc` (tests/upstreams/scripted_server.py, `relay = ["sampling",
"elicitation"]`), whose `ask` tool makes it send its client any request: what a hostile or
broken upstream may ask of the client through the relay.

Run by crates/toolgate-cli/tests/cli/gateway_requests.rs. Exits 0 when every check holds,
printing one `ok: ...` line per check and `passed: hostile requests` at the end.

  gateway_hostile_requests_client.py --stdio JSON_ARGV

Refused with an error to the upstream, never reaching the client's callbacks: an elicitation
whose property name holds a bidi override (named in the error), a sampling request with a
`tool_use` block, one over 256 KiB, one whose messages are not a list, one whose stop
sequence holds a bidi override; requests rmcp cannot read (a lone UTF-16 surrogate escape,
nesting past 128 levels: answered -32600 with their id), params of the wrong shape (-32602
saying what), an unknown method (-32601 naming it). Relayed: an elicitation whose message and title hold a bidi
override, cleaned for the user, its answer back under the key the upstream asked; then a
plain sampling request.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of


async def hostile(args: argparse.Namespace) -> None:
    elicited: list[types.ElicitRequestParams] = []
    sampled: list[types.CreateMessageRequestParams] = []

    async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicited.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="sampled"), model="m"
        )

    async with make_client(args, 60, sampling_callback=on_sample, elicitation_callback=on_elicit) as client:
        asked = 0

        async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
            nonlocal asked
            asked += 1  # arguments of their own each time, or the ledger answers the first
            r = await client.call_tool("sc__ask", {"method": method, "params": params, "n": asked})
            check(not r.is_error, f"the upstream's ask {asked} answers", text_of(r))
            return json.loads(text_of(r))

        def refused(got: dict[str, Any], needles: list[str], what: str) -> None:
            message = (got.get("error") or {}).get("message", "")
            check(all(n in message for n in needles), what, got)

        form = {"mode": "form", "message": "Name?"}
        got = await ask(
            "elicitation/create",
            {**form, "requestedSchema": {"type": "object", "properties": {"na<RLO>me": {"type": "string"}}}},
        )
        refused(
            got,
            ["did not relay", "the name `na\\u{202e}me` at /requestedSchema/properties"],
            "a property name with a bidi override is refused, naming it",
        )
        got = await ask(
            "sampling/createMessage",
            {
                "messages": [{"role": "assistant", "content": {"type": "tool_use", "id": "t1", "name": "rm", "input": {}}}],
                "maxTokens": 5,
            },
        )
        refused(got, ["message 0 holds a `tool_use` content block"], "tool content in sampling is refused")
        got = await ask(
            "sampling/createMessage",
            {"messages": [{"role": "user", "content": {"type": "text", "text": "<BIG>"}}], "maxTokens": 5},
        )
        refused(got, ["over the 262144 bytes (256 KiB)"], "a request over 256 KiB is refused")
        got = await ask("sampling/createMessage", {"messages": "not a list", "maxTokens": 5})
        check(
            got.get("error", {}).get("code") == -32602 and "not those of sampling" in got["error"]["message"],
            "malformed params are -32602 to the upstream, saying what did not fit",
            got,
        )
        got = await ask(
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
                "stopSequences": ["END<RLO>"],
            },
        )
        refused(got, ["/stopSequences/0"], "a stop sequence with a bidi override is refused")
        # what rmcp cannot read at all (a lone surrogate escape, nesting past 128 levels) is
        # still answered, with the upstream's id: its call does not hang to its timeout
        text = {"role": "user", "content": {"type": "text", "text": "a<LONE>b"}}
        got = await ask("sampling/createMessage", {"messages": [text], "maxTokens": 5})
        refused(got, ["did not read this", "escape"], "a lone surrogate escape is answered -32600")
        check(got["error"]["code"] == -32600, "as an invalid request", got)
        got = await ask("elicitation/create", {**form, "requestedSchema": {"type": "object", "x": "<DEEP>"}})
        refused(got, ["did not read this", "recursion limit"], "nesting past 128 levels is answered")
        got = await ask("sampling/createMessage", {"messages": [], "maxTokens": "5"})
        refused(got, ['invalid type: string "5"'], "a number sent as a string is answered saying so")
        got = await ask("elicitation/create", {**form, "requestedSchema": {"type": "object", "properties": {"n": {"oneOf": [{"$ref": "#/x"}]}}}})
        check(got.get("error", {}).get("code") == -32602, "an elicitation schema beyond the flat one is -32602", got)
        got = await ask("foo/bar", {})
        refused(got, ['serves no method "foo/bar"'], "an unknown method is named in its answer")
        check(elicited == [] and sampled == [], "nothing refused reached the client", (elicited, sampled))

        got = await ask(
            "elicitation/create",
            {
                "mode": "form",
                "message": "Your na<RLO>me?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "title": "Full na<RLO>me"}},
                    "required": ["name"],
                },
            },
        )
        check(got.get("result", {}).get("content") == {"name": "Ada"}, "the answer reaches the upstream under its key", got)
        check(len(elicited) == 1, "the elicitation reached the client once", elicited)
        shown = elicited[0].model_dump(by_alias=True, exclude_none=True)
        check(shown["message"] == "The upstream server sc asks: Your name?", "its message is cleaned", shown)
        prop = shown["requestedSchema"]["properties"]["name"]
        check(prop.get("title") == "Full name", "its title is cleaned, its property name kept", shown)

        got = await ask(
            "sampling/createMessage",
            {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5},
        )
        check(got.get("result", {}).get("content", {}).get("text") == "sampled", "a plain sampling request is relayed", got)
        check(len(sampled) == 1, "and reaches the client once", sampled)


def main() -> None:
    p = argparse.ArgumentParser()
    add_server_args(p)
    run_client(hostile, p.parse_args(), 120, "hostile requests")


if __name__ == "__main__":
    main()
