"""The HTTP side of the project's MCP servers (`env serve`, `serve-graphs`): a bearer token on
every request, on loopback by default.

Any local user (or web page: DNS rebinding) can reach a port on 127.0.0.1, so an HTTP server
answers only requests that carry its token, `Authorization: Bearer TOKEN`; others get 401. The
token is the one given (`--token`, `$AGENT_WORLD_TOKEN`) or a new random one, printed on
stderr at start. `serve_http(server, token)` runs a FastMCP server's streamable-HTTP app
behind that check with uvicorn, on the host and port of the server's settings.
"""

from __future__ import annotations

import hmac
import secrets
import sys
from typing import Any

import anyio
import uvicorn
from mcp.server.fastmcp import FastMCP
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketClose

from agent_world.errors import AgentWorldError

TOKEN_ENV = "AGENT_WORLD_TOKEN"
MIN_TOKEN_LENGTH = 16


class BearerAuth:
    """ASGI middleware: HTTP and WebSocket requests without `Authorization: Bearer <token>`
    are refused (401; WebSocket: closed with policy violation); lifespan events pass."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self._token = token.encode()

    def _authorized(self, scope: Scope) -> bool:
        scheme, _, given = (Headers(scope=scope).get("authorization") or "").partition(" ")
        # constant-time compare: the answer's timing says nothing about the token
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self._authorized(scope):
            if scope["type"] == "websocket":
                await WebSocketClose(code=1008)(scope, receive, send)
                return
            await JSONResponse(
                {"error": "unauthorized: send the server's token as 'Authorization: Bearer "
                          "TOKEN' (printed on its stderr at start, or the one it was given "
                          f"with --token / ${TOKEN_ENV})"},
                status_code=401, headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        await self.app(scope, receive, send)


def resolve_token(token: str | None) -> tuple[str, bool]:
    """(the token to require, whether it was made here): the one given, else a new one."""
    if token is None or token == "":
        return secrets.token_urlsafe(32), True
    if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token):
        raise AgentWorldError(f"the server token must be at least {MIN_TOKEN_LENGTH} "
                              "characters without spaces (--token / $" + TOKEN_ENV + ")")
    return token, False


def announce_token(token: str, made: bool) -> None:
    """One stderr line saying what clients must send (the token itself only when made here:
    the user already knows the one given)."""
    if made:
        print(f"bearer token: {token} (clients send 'Authorization: Bearer <token>'; give "
              f"your own with --token or ${TOKEN_ENV})", file=sys.stderr, flush=True)
    else:
        print(f"clients must send 'Authorization: Bearer <token>' with the token given "
              f"(--token / ${TOKEN_ENV})", file=sys.stderr, flush=True)


def http_app(server: FastMCP, token: str) -> ASGIApp:
    """The server's streamable-HTTP app (`/mcp`) behind the token check."""
    return BearerAuth(server.streamable_http_app(), token)


def serve_http(server: FastMCP, token: str, **uvicorn_options: Any) -> None:
    """Serve until stopped (uvicorn handles SIGINT/SIGTERM, then re-raises them)."""
    config = uvicorn.Config(http_app(server, token), host=server.settings.host,
                            port=server.settings.port,
                            log_level=server.settings.log_level.lower(), **uvicorn_options)
    anyio.run(uvicorn.Server(config).serve)


__all__ = ["TOKEN_ENV", "BearerAuth", "announce_token", "http_app", "resolve_token",
           "serve_http"]
