"""Local stand-ins for hosted chat-model APIs: one HTTP server on 127.0.0.1 answering the
OpenAI chat-completions, Ollama chat and Anthropic messages protocols with scripted replies,
so LangChain's real integration packages can be driven with no key and no network.

    with ChatStandIn(lambda request: "hello") as server:
        os.environ["OPENAI_BASE_URL"] = server.openai_url
        ...
    server.requests  # every request body, in order, with its path
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], str]


class ChatStandIn:
    def __init__(self, reply: Reply):
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
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
