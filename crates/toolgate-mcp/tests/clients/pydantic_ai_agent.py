"""pydantic-ai's MCP toolset, driven by its TestModel (an agent loop with no network model),
calling toolgate's built-in tools through `toolgate serve` over stdio.

  pydantic_ai_agent.py --workspace DIR -- SERVER_COMMAND...

TestModel calls each named tool once with arguments generated from its inputSchema (strings
are "a"), then answers with the tool results; the workspace holds a file named `a` so the
calls find something. Exits 0 when every call went through toolgate (one audit record each)
and the agent finished.
"""

from __future__ import annotations

import argparse
import json
import pathlib

import anyio
from client_support import check
from fastmcp.client import Client as FastMCPClient
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ToolReturnPart
from pydantic_ai.models.test import TestModel

TOOLS = ["search_code", "read_file", "glob"]


async def main(workspace: str, command: list[str]) -> None:
    transport = StdioTransport(command=command[0], args=command[1:])
    toolset = MCPToolset(FastMCPClient(transport), tool_error_behavior="failed")
    agent = Agent(TestModel(call_tools=TOOLS), toolsets=[toolset])
    async with agent:
        result = await agent.run("Find where the needle is.")
    returns = [
        p for m in result.all_messages() for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)
    ]
    called = sorted({p.tool_name for p in returns})
    check(called == sorted(TOOLS), "the agent called every tool", called)
    by_tool = {p.tool_name: p.content for p in returns}
    check("needle" in json.dumps(by_tool["search_code"], default=str), "search_code found the needle", by_tool["search_code"])
    check("needle" in json.dumps(by_tool["read_file"], default=str), "read_file read the file", by_tool["read_file"])
    check(isinstance(result.output, str) and result.output, "the agent finished with an answer", result.output)

    audit = pathlib.Path(workspace) / ".toolgate" / "audit.jsonl"
    tools_audited: list[str] = []
    for _ in range(50):
        if audit.exists():
            tools_audited = [json.loads(l)["tool"] for l in audit.read_text().splitlines()]
            if all(t in tools_audited for t in TOOLS):
                break
        await anyio.sleep(0.1)
    check(all(t in tools_audited for t in TOOLS), "every call went through toolgate's pipeline", tools_audited)
    print("passed: pydantic-ai", flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--workspace", required=True)
    p.add_argument("command", nargs="+")
    a = p.parse_args()
    anyio.run(main, a.workspace, a.command)
