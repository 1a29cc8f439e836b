"""An MCP client session (the official Python SDK, `mcp`) reading resources, resource
templates, prompts and completion from `toolgate serve`: the workspace's files (`file:///`),
and with `--gateway` server-everything's resources and prompts through the gateway (upstream
`ev`, its URIs as `ev+<uri>`, its prompts as `ev__<name>`).

Run by crates/toolgate-cli/tests/cli/resources.rs. Exits 0 when every check holds, printing
one `ok: ...` line per check and `passed: resources` at the end.

  resources_client.py --workspace DIR --stdio JSON_ARGV [--mode legacy|2026-07-28] [--gateway]

The workspace (made by the test): src/main.rs, docs/a b.md, img.png (binary), big.txt (past
the result limit), .env (hidden), secrets/key.txt (a deny rule covers secrets/).
"""

from __future__ import annotations

import argparse
import base64
import pathlib

from client_support import add_server_args, check, make_client, run_client


async def expect_error(call, code: int, needles: list[str], what: str) -> None:
    """`call()` fails with JSON-RPC `code` and a message holding every needle."""
    from mcp.shared.exceptions import MCPError

    try:
        got = await call()
    except MCPError as e:
        text = f"{e.error.message} {e.error.data}"
        check(e.error.code == code and all(n in text for n in needles), what, (e.error.code, text))
        return
    check(False, what, f"no error: {got}")


async def workspace(client, ws: pathlib.Path) -> None:
    from mcp_types import PromptReference, ResourceTemplateReference

    uris: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await client.list_resources(cursor=cursor, cache_mode="refresh")
        pages += 1
        uris += [str(r.uri) for r in page.resources]
        cursor = page.next_cursor
        if not cursor or pages > 50:
            break
    for want in ["file:///src/main.rs", "file:///docs/a%20b.md", "file:///img.png", "file:///big.txt"]:
        check(want in uris, f"{want} is listed", uris)
    check(not any("secrets" in u or ".env" in u for u in uris), "denied and hidden files are not listed", uris)
    check(len(uris) == len(set(uris)), "no resource is listed twice across pages", uris)

    r = await client.read_resource("file:///src/main.rs")
    c = r.contents[0]
    check(c.text == "fn main() {}\n" and str(c.uri) == "file:///src/main.rs" and c.mime_type == "text/x-rust",
          "a text file reads as text with its MIME type", c)
    r = await client.read_resource("file:///docs/a%20b.md")
    check(r.contents[0].text == "# notes\n", "a percent-encoded URI reads its file", r.contents[0])
    r = await client.read_resource("file:///img.png")
    c = r.contents[0]
    check(c.mime_type == "image/png" and base64.b64decode(c.blob) == (ws / "img.png").read_bytes(),
          "a binary file reads as a base64 blob", c.mime_type)
    r = await client.read_resource("file:///big.txt")
    text = r.contents[0].text
    check(len(text) < 80_000 and "read_result" in text and r.meta and "toolgate/truncation" in r.meta,
          "a text past the result limit is cut with its read_result handle", len(text))

    t = await client.list_resource_templates(cache_mode="refresh")
    check([x.uri_template for x in t.resource_templates][:1] == ["file:///{path}"], "the file template is listed first",
          t.resource_templates)
    done = await client.complete(ResourceTemplateReference(type="ref/resource", uri="file:///{path}"),
                                 {"name": "path", "value": "sr"})
    check(done.completion.values == ["src/main.rs"], "a path of the template completes", done.completion)
    done = await client.complete(ResourceTemplateReference(type="ref/resource", uri="file:///{path}"),
                                 {"name": "path", "value": "secrets/"})
    check(done.completion.values == [], "a denied path never completes", done.completion)

    await expect_error(lambda: client.read_resource("file:///missing.txt"), -32602,
                       ["file:///missing.txt", "does not exist"], "an unknown file is -32602 naming the URI")
    await expect_error(lambda: client.read_resource("file:///x%2F..%2F..%2Fetc%2Fpasswd"), -32602,
                       ["path_outside_workspace"], "a path escaping the workspace is refused")
    await expect_error(lambda: client.read_resource("file:///secrets/key.txt"), -32602,
                       ["permission_denied", "no-secrets"], "a denied path is refused naming the rule")
    await expect_error(lambda: client.read_resource("nope://x"), -32602,
                       ["nope://x", "not found"], "an unknown URI scheme is -32602")
    await expect_error(lambda: client.read_resource("file://evil.example/etc/passwd"), -32602,
                       ["host"], "a file URI naming a host is refused")
    await expect_error(lambda: client.list_resources(cursor="garbage", cache_mode="refresh"), -32602,
                       ["invalid cursor"], "a malformed cursor is -32602")
    await expect_error(lambda: client.complete(PromptReference(type="ref/prompt", name="nope"),
                                               {"name": "a", "value": ""}), -32602,
                       ["not served"], "completing an unknown prompt is -32602")


async def gateway(client) -> None:
    from mcp_types import PromptReference

    uris: list[str] = []
    cursor = None
    for _ in range(20):
        page = await client.list_resources(cursor=cursor, cache_mode="refresh")
        uris += [str(r.uri) for r in page.resources]
        cursor = page.next_cursor
        if not cursor:
            break
    ev = [u for u in uris if u.startswith("ev+")]
    check(ev and all(u.startswith("ev+demo://") for u in ev), "the upstream's resources are listed as ev+<uri>", ev[:5])
    check("file:///src/main.rs" in uris, "the workspace's resources are listed beside them", uris[:5])
    r = await client.read_resource(ev[0])
    check(len(r.contents) >= 1 and str(r.contents[0].uri) == ev[0], "an upstream resource reads through the gateway, at its namespaced URI", r.contents[0])
    t = await client.list_resource_templates(cache_mode="refresh")
    names = [x.uri_template for x in t.resource_templates]
    check(any(n.startswith("ev+") for n in names), "the upstream's templates are namespaced", names)

    prompts = await client.list_prompts(cache_mode="refresh")
    names = [p.name for p in prompts.prompts]
    check("ev__simple-prompt" in names and "ev__args-prompt" in names, "the upstream's prompts are listed as ev__<name>", names)
    p = await client.get_prompt("ev__simple-prompt")
    check(len(p.messages) >= 1, "an upstream prompt is got through the gateway", p)
    p = await client.get_prompt("ev__args-prompt", {"city": "Paris", "state": "Texas"})
    check("Paris" in str(p.messages), "an upstream prompt's arguments reach it", p.messages)
    await expect_error(lambda: client.get_prompt("ev__nope"), -32602, ["ev__nope"],
                       "an unknown prompt is -32602 naming it")
    await expect_error(lambda: client.get_prompt("ev__args-prompt", {}), -32602, ["city"],
                       "a missing required prompt argument is -32602 naming it")
    done = await client.complete(PromptReference(type="ref/prompt", name="ev__completable-prompt"),
                                 {"name": "department", "value": "En"})
    check("Engineering" in done.completion.values, "completion is forwarded to the upstream", done.completion)


async def session(args: argparse.Namespace) -> None:
    ws = pathlib.Path(args.workspace)
    async with make_client(args, 60) as client:
        await workspace(client, ws)
        if args.gateway:
            await gateway(client)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workspace", required=True)
    p.add_argument("--gateway", action="store_true")
    add_server_args(p)
    args = p.parse_args()
    run_client(session, args, 150, "resources")


if __name__ == "__main__":
    main()
