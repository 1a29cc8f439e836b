"""A real OAuth 2.1 authorization server for toolgate's identity tests, on 127.0.0.1.

Built from the MCP Python SDK's authorization-server routes (RFC 8414 metadata, dynamic client
registration, /authorize with PKCE, /token) with a provider that logs in the user named by
the registering client's `client_name` (alice is in the group toolgate-admins, bob in staff)
and issues RS256 JWTs signed with joserfc (Authlib's JOSE library), published at /jwks; with
`--opaque`, random tokens answered by RFC 7662 introspection at /introspect (client
`toolgate`, secret from $TOOLGATE_TEST_INTROSPECTION_SECRET).

Test controls (not OAuth): POST /test/mint (a token with chosen claims, algorithm and key),
POST /test/rotate (a new signing key, the old one dropped), POST /test/jwks (JSON
{"down": bool, "slow": seconds, "garbage": bool}: the JWKS endpoint answers 503 while down,
after `slow` seconds, or with a body that is not JSON), POST /test/introspection (JSON
{"slow": seconds, "status": code}: the introspection endpoint's delay and an error status),
GET /test/stats (how many times the JWKS and introspection endpoints were asked:
{"jwks": n, "introspect": n}).

Prints one line, the issuer (as its metadata names it), then serves until killed.
"""

import argparse
import base64
import json
import os
import secrets
import socket
import sys
import time

import anyio
import uvicorn
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

GROUPS = {"alice": ["toolgate-admins"], "bob": ["staff"]}
SCOPES = ["mcp:tools", "mcp:admin"]


def new_key(kid):
    return RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"})


class State:
    def __init__(self, issuer, opaque):
        self.issuer = issuer
        self.opaque = opaque
        self.key = new_key("k1")
        self.keys = 1
        self.jwks_down = False
        self.jwks_slow = 0.0
        self.jwks_garbage = False
        self.introspection_slow = 0.0
        self.introspection_status = 200
        self.stats = {"jwks": 0, "introspect": 0}
        # opaque token -> claims
        self.introspected = {}

    def claims(self, sub, aud, scopes, ttl=600):
        now = int(time.time())
        return {
            "iss": self.issuer,
            "sub": sub,
            "aud": aud,
            "iat": now,
            "exp": now + ttl,
            "scope": " ".join(scopes),
            "groups": GROUPS.get(sub, []),
        }

    def issue(self, claims):
        if self.opaque:
            token = secrets.token_urlsafe(32)
            self.introspected[token] = claims
            return token
        return jwt.encode({"alg": "RS256", "kid": self.key.kid}, claims, self.key)


class Provider:
    """The SDK's OAuthAuthorizationServerProvider: in memory, logging in the client's name."""

    def __init__(self, state):
        self.state = state
        self.clients = {}
        self.codes = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp:tools"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=client.client_name or "anonymous",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client, authorization_code) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        aud = authorization_code.resource or "urn:no-resource"
        claims = self.state.claims(authorization_code.subject, aud, authorization_code.scopes)
        return OAuthToken(
            access_token=self.state.issue(claims),
            token_type="Bearer",
            expires_in=600,
            scope=" ".join(authorization_code.scopes),
        )

    async def load_refresh_token(self, client, refresh_token):
        return None

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        raise NotImplementedError

    async def load_access_token(self, token):
        return None

    async def revoke_token(self, token):
        return None


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def app_for(state):
    provider = Provider(state)
    issuer_url = AnyHttpUrl(state.issuer)
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=["mcp:tools"])
    revocation = RevocationOptions(enabled=False)
    metadata = build_metadata(issuer_url, None, registration, revocation).model_dump(
        mode="json", exclude_none=True
    )
    base = state.issuer.rstrip("/")
    metadata["jwks_uri"] = base + "/jwks"
    metadata["introspection_endpoint"] = base + "/introspect"

    async def well_known(request):
        return JSONResponse(metadata)

    async def jwks(request):
        state.stats["jwks"] += 1
        if state.jwks_slow:
            await anyio.sleep(state.jwks_slow)
        if state.jwks_down:
            return Response("down", status_code=503)
        if state.jwks_garbage:
            return Response("{not json", media_type="application/json")
        return JSONResponse({"keys": [state.key.as_dict(private=False)]})

    async def introspect(request: Request):
        state.stats["introspect"] += 1
        if state.introspection_slow:
            await anyio.sleep(state.introspection_slow)
        if state.introspection_status != 200:
            return JSONResponse({"error": "server_error"}, status_code=state.introspection_status)
        auth = request.headers.get("authorization", "")
        expected = "Basic " + base64.b64encode(
            b"toolgate:" + os.environ.get("TOOLGATE_TEST_INTROSPECTION_SECRET", "").encode()
        ).decode()
        if auth != expected:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        form = await request.form()
        claims = state.introspected.get(form.get("token", ""))
        if claims is None:
            return JSONResponse({"active": False})
        return JSONResponse({"active": True, **claims})

    async def mint(request: Request):
        """{"sub", "aud", "scope", "exp_in", "nbf_in", "iss", "alg", "key", "drop", "set",
        "header"} -> {"token"}: `set` claims replace the usual ones (any JSON), `header` fields
        are added to the JWS header (jku, x5u...); key "embedded" signs with a key of the
        client's own, published in the header's `jwk` under the server's key id."""
        spec = await request.json()
        claims = state.claims(spec.get("sub", "alice"), spec["aud"], spec.get("scope", "mcp:tools").split())
        now = int(time.time())
        if "exp_in" in spec:
            claims["exp"] = now + spec["exp_in"]
        if "nbf_in" in spec:
            claims["nbf"] = now + spec["nbf_in"]
        if "iss" in spec:
            claims["iss"] = spec["iss"]
        for k in spec.get("drop", []):
            claims.pop(k, None)
        claims.update(spec.get("set", {}))
        extra = spec.get("header", {})
        key = spec.get("key", "current")
        alg = spec.get("alg", "RS256")
        if state.opaque:
            token = secrets.token_urlsafe(32)
            state.introspected[token] = claims
        elif alg == "none":
            header = b64(json.dumps({"alg": "none", "typ": "JWT", "kid": state.key.kid}).encode())
            token = header + "." + b64(json.dumps(claims).encode()) + "."
        elif alg == "HS256":
            # the public key's modulus as an HMAC secret: the classic confusion attack
            secret = OctKey.import_key(state.key.as_dict(private=False)["n"].encode())
            token = jwt.encode({"alg": "HS256", "kid": state.key.kid}, claims, secret, algorithms=["HS256"])
        elif key == "unknown":
            other = new_key(spec.get("kid", "not-published"))
            token = jwt.encode({"alg": "RS256", "kid": other.kid, **extra}, claims, other)
        elif key == "embedded":
            other = new_key(state.key.kid)
            header = {"alg": "RS256", "kid": state.key.kid, "jwk": other.as_dict(private=False), **extra}
            token = jwt.encode(header, claims, other)
        elif key == "forged":
            # the published key id, another key's signature
            other = new_key(state.key.kid)
            token = jwt.encode({"alg": "RS256", "kid": state.key.kid}, claims, other)
        else:
            token = jwt.encode({"alg": "RS256", "kid": state.key.kid, **extra}, claims, state.key)
        return JSONResponse({"token": token})

    async def rotate(request):
        state.keys += 1
        state.key = new_key(f"k{state.keys}")
        return JSONResponse({"kid": state.key.kid})

    async def jwks_switch(request: Request):
        spec = await request.json()
        state.jwks_down = bool(spec.get("down"))
        state.jwks_slow = float(spec.get("slow", 0))
        state.jwks_garbage = bool(spec.get("garbage"))
        return JSONResponse({"down": state.jwks_down})

    async def introspection_switch(request: Request):
        spec = await request.json()
        state.introspection_slow = float(spec.get("slow", 0))
        state.introspection_status = int(spec.get("status", 200))
        return JSONResponse({})

    async def stats(request):
        return JSONResponse(state.stats)

    routes = [
        Route("/.well-known/oauth-authorization-server", well_known, methods=["GET"]),
        Route("/jwks", jwks, methods=["GET"]),
        Route("/introspect", introspect, methods=["POST"]),
        Route("/test/mint", mint, methods=["POST"]),
        Route("/test/rotate", rotate, methods=["POST"]),
        Route("/test/jwks", jwks_switch, methods=["POST"]),
        Route("/test/introspection", introspection_switch, methods=["POST"]),
        Route("/test/stats", stats, methods=["GET"]),
    ] + create_auth_routes(provider, issuer_url, client_registration_options=registration,
                           revocation_options=revocation)
    return Starlette(routes=routes), metadata["issuer"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opaque", action="store_true")
    args = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    state = State(f"http://127.0.0.1:{port}", args.opaque)
    app, issuer = app_for(state)
    state.issuer = issuer
    print(issuer, flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
