"""The MCP Python SDK's OAuth client against `toolgate serve --http` with `[server.auth]`.

Run by crates/toolgate-cli/tests/cli/identity.rs, with the authorization server of
oauth_server.py. Prints one JSON object on stdout.

  oauth_client.py flow --url URL --user NAME [--calls JSON] [--mode MODE]
      The SDK's whole flow: the 401 names the Protected Resource Metadata (RFC 9728), which
      names the authorization server, whose metadata (RFC 8414) gives the endpoints; dynamic
      registration as client NAME (the test server logs in the client's name), PKCE, the
      code, the token; then tools/list and each call of --calls ([[name, arguments], ...]).
      {"tools": [names], "calls": [{"name", "is_error", "kind", "text"}], "discovery": [urls]}

  oauth_client.py probe --url URL --issuer ISSUER --cases JSON
      For each case (a /test/mint spec, or null for no token), an initialize POST with the
      token: {"cases": [{"status", "www_authenticate", "retry_after", "body"}],
      "metadata": PRM document}. A case's "extra" (not sent to /test/mint) changes how the
      token is sent: "headers" ([[name, value]], "{token}" replaced) are sent after the
      others (a second Authorization among them), "query" is appended to the URL ("{token}"
      replaced), "in_query_only" sends no Authorization header.

  oauth_client.py session --url URL --issuer ISSUER
      alice opens a session (2025-11-25) with her token, then the same session's tools/list is
      sent with no token, alice's expired token, alice's token without the scope, bob's token,
      and alice's token again: {"token": alice's, "session": id, "statuses": [...],
      "tools": [names of the last answer]}.

  oauth_client.py requests --url URL --issuer ISSUER --user NAME --requests JSON
      NAME opens a session (2025-11-25) with a minted token, then each request of --requests
      ([{"method", "params", "as": a /test/mint spec (default: NAME's token), "http": "POST"
      (default), "GET" or "DELETE"}]) is sent in that session: {"session": id, "answers":
      [{"status", "message": the JSON-RPC answer of a 200 POST}]}.
"""

from __future__ import annotations

import argparse
import json
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
import mcp_types as types
from client_support import text_of
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def flow(args) -> dict:
    seen: list[str] = []
    redirect: dict = {}

    async def on_redirect(url: str) -> None:
        # the user's browser: the test server approves at once and redirects with the code
        async with httpx2.AsyncClient() as http:
            r = await http.get(url, follow_redirects=False)
        location = r.headers["location"]
        redirect.update({k: v[0] for k, v in parse_qs(urlparse(location).query).items()})

    async def on_callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirect["code"], state=redirect.get("state"))

    async def log_request(request):
        seen.append(f"{request.method} {request.url}")

    auth = OAuthClientProvider(
        server_url=args.url,
        client_metadata=OAuthClientMetadata(
            client_name=args.user,
            redirect_uris=["http://127.0.0.1:9/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=Memory(),
        redirect_handler=on_redirect,
        callback_handler=on_callback,
    )
    http = create_mcp_http_client(auth=auth)
    http.event_hooks["request"].append(log_request)
    calls = json.loads(args.calls)
    out: dict = {"calls": []}
    async with Client(streamable_http_client(args.url, http_client=http), mode=args.mode,
                      read_timeout_seconds=60) as client:
        tools = await client.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        for name, arguments in calls:
            try:
                r = await client.call_tool(name, arguments)
                sc = r.structured_content or {}
                out["calls"].append({
                    "name": name,
                    "is_error": bool(r.is_error),
                    "kind": (sc.get("error") or {}).get("kind") if isinstance(sc, dict) else None,
                    "text": text_of(r)[:400],
                })
            except Exception as e:  # an unknown tool is a JSON-RPC error
                out["calls"].append({"name": name, "is_error": True, "kind": "protocol_error",
                                     "text": str(e)[:400]})
    out["discovery"] = [s for s in seen if "well-known" in s or "/register" in s or "/token" in s]
    return out


async def probe(args) -> dict:
    cases = json.loads(args.cases)
    base = args.issuer.rstrip("/")
    out: dict = {"cases": []}
    # a new connection to toolgate per request: minting a token can take longer than toolgate
    # keeps an idle connection (header_timeout_ms), and a request sent as it closes is lost
    fresh = httpx2.Limits(max_keepalive_connections=0)
    async with httpx2.AsyncClient(timeout=30) as http, \
            httpx2.AsyncClient(timeout=30, limits=fresh) as tg:
        sent: list = []  # the token of each case, for {"again": i}
        for spec in cases:
            headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
            token = None
            if spec is not None:
                if "raw" in spec:
                    token = spec["raw"]
                elif "again" in spec:
                    token = sent[spec["again"]]
                else:
                    if "control" in spec:
                        await http.post(base + spec["control"][0], json=spec["control"][1])
                        spec = spec["mint"]
                    mint = {k: v for k, v in spec.items() if k != "extra"}
                    token = (await http.post(base + "/test/mint", json=mint)).json()["token"]
                headers["authorization"] = f"Bearer {token}"
            sent.append(token)
            url = args.url
            extra = spec.get("extra", {}) if isinstance(spec, dict) else {}
            if "query" in extra:
                url += "?" + extra["query"].replace("{token}", token or "")
            if extra.get("in_query_only"):
                del headers["authorization"]
            headers = list(headers.items()) + [(k, v.replace("{token}", token or ""))
                                               for k, v in extra.get("headers", [])]
            r = await tg.post(url, headers=headers, content=json.dumps(INIT))
            out["cases"].append({
                "status": r.status_code,
                "www_authenticate": r.headers.get("www-authenticate"),
                "retry_after": r.headers.get("retry-after"),
                "body": r.text[:400] if r.status_code >= 400 else None,
            })
        prm = urlparse(args.url)
        r = await tg.get(f"{prm.scheme}://{prm.netloc}/.well-known/oauth-protected-resource{prm.path}")
        out["metadata"] = r.json()
    return out


async def session(args) -> dict:
    base = args.issuer.rstrip("/")
    fresh = httpx2.Limits(max_keepalive_connections=0)
    async with httpx2.AsyncClient(timeout=30) as http, \
            httpx2.AsyncClient(timeout=30, limits=fresh) as tg:
        async def mint(**spec) -> str:
            spec.setdefault("aud", args.url)
            return (await http.post(base + "/test/mint", json=spec)).json()["token"]

        alice = await mint(sub="alice")
        tokens = [None, await mint(sub="alice", exp_in=-120), await mint(sub="alice", scope="mcp:admin"),
                  await mint(sub="bob"), alice]
        base_headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        r = await tg.post(args.url, headers={**base_headers, "authorization": f"Bearer {alice}"},
                          content=json.dumps(INIT))
        r.raise_for_status()
        sid = r.headers["mcp-session-id"]
        in_session = {**base_headers, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        r = await tg.post(args.url, headers={**in_session, "authorization": f"Bearer {alice}"},
                          content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        r.raise_for_status()
        statuses = []
        tools = None
        for i, token in enumerate(tokens):
            headers = dict(in_session)
            if token is not None:
                headers["authorization"] = f"Bearer {token}"
            r = await tg.post(args.url, headers=headers,
                              content=json.dumps({"jsonrpc": "2.0", "id": 2 + i, "method": "tools/list"}))
            statuses.append(r.status_code)
            if r.status_code == 200:
                text = r.text
                if text.lstrip().startswith("{"):
                    answer = json.loads(text)
                else:  # one SSE event with the answer
                    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
                    answer = json.loads([d for d in data if d][-1])
                tools = sorted(t["name"] for t in answer["result"]["tools"])
    return {"token": alice, "session": sid, "statuses": statuses, "tools": tools}


def sse_answer(text: str) -> dict:
    """The JSON-RPC message of a response: the body, or the last event of an SSE stream."""
    if text.lstrip().startswith("{"):
        return json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads([d for d in data if d][-1])


async def requests(args) -> dict:
    base = args.issuer.rstrip("/")
    fresh = httpx2.Limits(max_keepalive_connections=0)
    plan = json.loads(args.requests)
    async with httpx2.AsyncClient(timeout=30) as http, \
            httpx2.AsyncClient(timeout=30, limits=fresh) as tg:
        async def mint(spec) -> str:
            spec = {"aud": args.url, **spec}
            return (await http.post(base + "/test/mint", json=spec)).json()["token"]

        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        opener = await mint({"sub": args.user})
        r = await tg.post(args.url, headers={**headers, "authorization": f"Bearer {opener}"},
                          content=json.dumps(INIT))
        r.raise_for_status()
        sid = r.headers["mcp-session-id"]
        session = {**headers, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        r = await tg.post(args.url, headers={**session, "authorization": f"Bearer {opener}"},
                          content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        r.raise_for_status()
        answers = []
        for i, step in enumerate(plan):
            token = await mint(step["as"]) if "as" in step else opener
            h = {**session, "authorization": f"Bearer {token}"}
            body = {"jsonrpc": "2.0", "id": 10 + i, "method": step["method"],
                    "params": step.get("params", {})}
            r = await tg.request(step.get("http", "POST"), args.url, headers=h,
                                 content=json.dumps(body) if step.get("http", "POST") == "POST" else None)
            answer = {"status": r.status_code}
            if r.status_code == 200 and step.get("http", "POST") == "POST":
                answer["message"] = sse_answer(r.text)
            answers.append(answer)
    return {"session": sid, "answers": answers}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["flow", "probe", "session", "requests"])
    p.add_argument("--requests", default="[]")
    p.add_argument("--url", required=True)
    p.add_argument("--user")
    p.add_argument("--calls", default="[]")
    p.add_argument("--mode", default="legacy")
    p.add_argument("--issuer")
    p.add_argument("--cases", default="[]")
    args = p.parse_args()

    async def go():
        with anyio.fail_after(90):
            return await {"flow": flow, "probe": probe, "session": session,
                          "requests": requests}[args.what](args)

    print(json.dumps(anyio.run(go)), flush=True)


if __name__ == "__main__":
    main()
