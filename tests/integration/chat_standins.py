"""Local stand-ins for hosted chat-model APIs: one HTTP server on 127.0.0.1 answering the
OpenAI chat-completions, Ollama chat and Anthropic messages protocols with scripted replies,
so LangChain's real integration packages can be driven with no key and no network.

    with ChatStandIn(lambda request: "hello") as server:
        os.environ["OPENAI_BASE_URL"] = server.openai_url
        ...
    server.requests  # every request body, in order, with its path

`refuse_tools=True` makes it a server for a plain chat model: a request carrying tools or a
response format (OpenAI `tools`/`response_format`, Ollama `tools`/`format`, Anthropic `tools`)
is answered HTTP 400, as vLLM without a tool parser or Ollama for a model without tools do.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], str]
# request fields that ask for tool calling or structured output, per protocol
TOOL_FIELDS = ("tools", "tool_choice", "functions", "response_format", "format")


class ChatStandIn:
    def __init__(self, reply: Reply, refuse_tools: bool = False):
        self.reply = reply
        self.refuse_tools = refuse_tools
        self.requests: list[dict[str, Any]] = []
        self.refused = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def openai_url(self) -> str:
        return f"{self.base}/v1"

    def __enter__(self) -> ChatStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet test output
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                standin.requests.append({"path": self.path, **body})
                asked = [f for f in TOOL_FIELDS if body.get(f)]
                if standin.refuse_tools and asked:
                    standin.refused += 1
                    message = f"this model does not support {', '.join(asked)}"
                    self._send(json.dumps({"error": {"message": message,
                                                     "type": "invalid_request_error"}}
                                          if not self.path.endswith("/api/chat")
                                          else {"error": message}).encode(),
                               "application/json", 400)
                    return
                text = standin.reply(body)
                model = body.get("model", "stand-in")
                if self.path.endswith("/chat/completions"):
                    self._json({"id": "chatcmpl-1", "object": "chat.completion",
                                "created": int(time.time()), "model": model,
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": text}}],
                                "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                          "total_tokens": 2}})
                elif self.path.endswith("/api/chat"):  # Ollama: newline-delimited JSON
                    line = {"model": model, "created_at": "2026-01-01T00:00:00Z",
                            "message": {"role": "assistant", "content": text}, "done": True,
                            "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 1}
                    self._send(json.dumps(line).encode() + b"\n", "application/x-ndjson")
                elif self.path.endswith("/messages"):  # Anthropic
                    self._json({"id": "msg_1", "type": "message", "role": "assistant",
                                "model": model, "content": [{"type": "text", "text": text}],
                                "stop_reason": "end_turn", "stop_sequence": None,
                                "usage": {"input_tokens": 1, "output_tokens": 1}})
                else:
                    self._send(b'{"error": "unknown path"}', "application/json", 404)

            def _json(self, data: dict[str, Any]) -> None:
                self._send(json.dumps(data).encode(), "application/json")

            def _send(self, body: bytes, kind: str, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
