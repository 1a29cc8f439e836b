"""Sessions of the official Python SDK (`mcp`) with `toolgate serve` as a gateway in front of
server-everything (npm) twice: `ev`, whose entry relays sampling and elicitation, and
`plain`, whose entry relays nothing.

Run by crates/toolgate-cli/tests/cli/gateway_requests.rs. Exits 0 when every check holds,
printing one `ok: ...` line per check and `passed: gateway requests` at the end.

  gateway_requests_client.py --stdio JSON_ARGV
  gateway_requests_client.py --url URL --token TOKEN --post-streams-only

With `--post-streams-only` the client opens no standalone GET stream: the relayed requests
reach it only because they ride the SSE stream of the `tools/call` they were made for, and
so does the `notifications/cancelled` that ends one.

1. A client that declares sampling and elicitation: the upstream's sampling request reaches
   its callback, cleaned of bidirectional characters, and its answer comes back in the tool
   result; likewise an elicitation. `plain` never saw the capabilities, so it serves no
   sampling tool and calling one is an error (an unknown tool); the callbacks are not
   called.
2. A client that declares neither: the sampling tool's result is an error saying the client
   did not declare the capability; nothing of it reaches the first client's callback.
3. A client whose sampling callback never answers: the call ends at the upstream's timeout
   with an error, and the callback is cancelled (with `--post-streams-only` too). When the
   client cancels a call whose request is relayed, the callback runs once (over HTTP the SDK
   resumes the closed stream, which must not replay the request) and, where the client has a
   stream left to hear it on (stdio, the GET stream), is cancelled.
"""

from __future__ import annotations

import argparse
import time

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from client_support import add_server_args, check, make_client, run_client, text_of

ANSWER = "SAMPLED-ANSWER-42"


async def requests(args: argparse.Namespace) -> None:
    sampled: list[types.CreateMessageRequestParams] = []
    elicited: list[types.ElicitRequestParams] = []

    async def on_sample(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=ANSWER),
            model="test-model",
            stop_reason="endTurn",
        )

    async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicited.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})

    async with make_client(args, 60, sampling_callback=on_sample, elicitation_callback=on_elicit) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        for want in ["ev__trigger-sampling-request", "ev__trigger-elicitation-request", "plain__echo"]:
            check(want in tools, f"{want} is listed", sorted(tools))
        check(
            "plain__trigger-sampling-request" not in tools and "plain__trigger-elicitation-request" not in tools,
            "an upstream that relays nothing was declared no sampling or elicitation",
            sorted(t for t in tools if t.startswith("plain__")),
        )

        r = await client.call_tool("ev__trigger-sampling-request", {"prompt": "hi\u202etxt\u200b!", "maxTokens": 7})
        check(not r.is_error and ANSWER in text_of(r), "the client's model answer comes back in the tool result", text_of(r))
        check(len(sampled) == 1, "the sampling request reached the client's callback once", sampled)
        asked = sampled[0]
        text = asked.messages[0].content.text
        check("context: hitxt!" in text, "the upstream's prompt reached the client", text)
        check("\u202e" not in text and "\u200b" not in text, "bidirectional and invisible characters are cleaned", repr(text))
        check(asked.max_tokens == 7 and asked.system_prompt == "You are a helpful test server.", "the request's parameters pass", asked)

        r = await client.call_tool("ev__trigger-elicitation-request", {})
        check(len(elicited) == 1, "the elicitation request reached the client's callback once", elicited)
        check(
            elicited[0].message.startswith("The upstream server ev asks: Please provide inputs"),
            "with the upstream's message, saying who asks",
            elicited[0].message,
        )
        check(not r.is_error and "Ada Lovelace" in text_of(r), "the user's answer comes back in the tool result", text_of(r))

        try:
            r = await client.call_tool("plain__trigger-sampling-request", {"prompt": "no", "maxTokens": 5})
            refused = f"a result: {r}"
        except MCPError as e:
            refused = str(e)
        check("no tool" in refused, "an upstream that relays nothing has no sampling tool to call", refused)
        r = await client.call_tool("plain__echo", {"message": "still here"})
        check(not r.is_error and "Echo: still here" in text_of(r), "the upstream without relays serves", text_of(r))

    # a client that declares neither capability
    async with make_client(args, 60) as bare:
        r = await bare.call_tool("ev__trigger-sampling-request", {"prompt": "nobody", "maxTokens": 5})
        check(r.is_error is True, "a client without sampling gets an error result", text_of(r))
        check("did not declare the sampling capability" in text_of(r), "saying which condition failed", text_of(r))
        r = await bare.call_tool("ev__trigger-elicitation-request", {})
        check(r.is_error is True and "elicitation" in text_of(r), "and without elicitation too", text_of(r))
    check(len(sampled) == 1 and len(elicited) == 1, "no other session's callback was called", (sampled, elicited))

    # a client whose model never answers: the call ends at its timeout, the relay is cancelled
    hung = {"started": 0, "cancelled": 0}

    async def never(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        hung["started"] += 1
        try:
            await anyio.sleep(120)
        except anyio.get_cancelled_exc_class():
            hung["cancelled"] += 1
            raise
        raise AssertionError("the callback was never cancelled")

    async with make_client(args, 60, sampling_callback=never) as slow:
        started = time.monotonic()
        r = await slow.call_tool("ev__trigger-sampling-request", {"prompt": "wait", "maxTokens": 5})
        took = time.monotonic() - started
        check(r.is_error is True, "a call whose client never answers the relay ends with an error", text_of(r))
        check(took < 15, "within the upstream's timeout", took)
        check(hung["started"] == 1, "the request reached the callback", hung)
        # without a GET stream too: the cancellation rides the POST stream of the call
        deadline = time.monotonic() + 5
        while hung["cancelled"] == 0 and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        check(hung["cancelled"] == 1, "the relayed request is cancelled at the client", hung)
        r = await slow.call_tool("plain__echo", {"message": "after"})
        check(not r.is_error and "Echo: after" in text_of(r), "the session goes on", text_of(r))

        # the client gives up on the call while its request is relayed: the SDK resumes the
        # call's closed stream (Last-Event-ID), which must not hand it the request again
        before = dict(hung)
        with anyio.move_on_after(1.5):
            await slow.call_tool("ev__trigger-sampling-request", {"prompt": "give up", "maxTokens": 5})
        deadline = time.monotonic() + 5
        while hung["cancelled"] == before["cancelled"] and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        if args.url:
            await anyio.sleep(1)  # time for a resumed stream to replay what it would
        check(hung["started"] == before["started"] + 1, "a relayed request reaches the callback once", hung)
        if not args.post_streams_only:
            check(hung["cancelled"] == before["cancelled"] + 1, "and is cancelled with the call", hung)
        r = await slow.call_tool("plain__echo", {"message": "after cancel"})
        check(not r.is_error and "Echo: after cancel" in text_of(r), "the session goes on", text_of(r))


def main() -> None:
    p = argparse.ArgumentParser()
    add_server_args(p)
    run_client(requests, p.parse_args(), 150, "gateway requests")


if __name__ == "__main__":
    main()
