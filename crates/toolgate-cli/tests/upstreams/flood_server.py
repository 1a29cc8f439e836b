"""An MCP stdio server on the official Python SDK (the low-level `Server`) that floods its
client with what a server may send unasked, for the gateway's flood tests:

  flood_server.py --log FILE

Tools:

- `flood(n)`: while the call runs, sends as fast as it can `n` log messages
  (`notifications/message`), `n` progress notifications for the call, `n // 4`
  `notifications/resources/updated` of `flood://a`, `n // 10`
  `notifications/resources/list_changed`, `n // 10` `notifications/tools/list_changed` and
  `n // 10` `notifications/prompts/list_changed`, then answers `flooded N`;
- `echo(text)`: answers `echo: TEXT` at once;
- `relists()`: answers how many `tools/list` and `prompts/list` requests it has been sent,
  how many `tools/list_changed` and `prompts/list_changed` it sent, and how many of those it
  had sent when it last answered a listing of that list, as JSON text
  `{"tools": N, "prompts": M, "tools_changed": C, "prompts_changed": D, "tools_seen": S,
  "prompts_seen": P}` (the last listing is current when its `_seen` equals its `_changed`).

One prompt, `hello`.

Resources `flood://a`, `flood://b` and `flood://c` (read as `content of URI`), with
subscriptions. Every `resources/read`, `resources/subscribe` and `resources/unsubscribe` is
appended to the --log FILE as a JSON line `{"method": ..., "uri": ...}`.
"""

from __future__ import annotations

import argparse
import json

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

URIS = ["flood://a", "flood://b", "flood://c"]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--log", required=True)
    args = p.parse_args()
    relists = {"tools": 0, "prompts": 0}
    # the list_changed sent of each list, and how many of them its last listing came after
    changed = {"tools": 0, "prompts": 0}
    seen = {"tools": 0, "prompts": 0}

    def record(method: str, uri: str) -> None:
        with open(args.log, "a") as f:
            f.write(json.dumps({"method": method, "uri": uri}) + "\n")

    def text(t: str) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=t)])

    async def list_tools(ctx, params) -> types.ListToolsResult:
        relists["tools"] += 1
        seen["tools"] = changed["tools"]
        obj = {"type": "object"}
        return types.ListToolsResult(
            tools=[
                types.Tool(name="flood", input_schema={**obj, "properties": {"n": {"type": "integer"}}}),
                types.Tool(name="echo", input_schema={**obj, "properties": {"text": {"type": "string"}}}),
                types.Tool(name="relists", input_schema=obj),
            ]
        )

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        a = params.arguments or {}
        if params.name == "echo":
            return text(f"echo: {a.get('text', '')}")
        if params.name == "relists":
            figures = dict(relists)
            for k in changed:
                figures[f"{k}_changed"] = changed[k]
                figures[f"{k}_seen"] = seen[k]
            return text(json.dumps(figures))
        n = int(a.get("n", 20000))
        s = ctx.session
        for i in range(n):
            await s.send_log_message(level="info", data=f"line {i}", logger="flood", related_request_id=ctx.request_id)
            await s.report_progress(i + 1, n, f"step {i + 1}")
            if i % 4 == 0:
                await s.send_resource_updated("flood://a")
            if i % 10 == 0:
                await s.send_resource_list_changed()
                changed["tools"] += 1
                await s.send_tool_list_changed()
                changed["prompts"] += 1
                await s.send_prompt_list_changed()
        return text(f"flooded {n}")

    async def list_prompts(ctx, params) -> types.ListPromptsResult:
        relists["prompts"] += 1
        seen["prompts"] = changed["prompts"]
        return types.ListPromptsResult(prompts=[types.Prompt(name="hello", description="Says hello.")])

    async def get_prompt(ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text="hello"))
        return types.GetPromptResult(messages=[message])

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri=u, name=u[-1]) for u in URIS])

    async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        record("resources/read", uri)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=f"content of {uri}")]
        )

    async def subscribe(ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        record("resources/subscribe", str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        record("resources/unsubscribe", str(params.uri))
        return types.EmptyResult()

    async def set_level(ctx, params) -> types.EmptyResult:
        return types.EmptyResult()

    server = Server(
        "flood",
        version="1.0.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_set_logging_level=set_level,
    )

    async def run() -> None:
        options = server.create_initialization_options(
            NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True)
        )
        async with stdio_server() as (read, write):
            await server.run(read, write, options)

    anyio.run(run)


if __name__ == "__main__":
    main()
