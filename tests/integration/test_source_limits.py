"""Reading a source is bounded in bytes and time, whatever the source sends."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agent_world.errors import SourceError
from agent_world.mining.sources import read_mcp_url

pytestmark = pytest.mark.integration


class _Endless(BaseHTTPRequestHandler):
    """Answers every request with a JSON body that never ends."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        chunk = b" " * 65536
        try:
            self.wfile.write(b"1\r\n[\r\n")
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:  # the client stopped reading
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def endless_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


def test_an_endless_http_body_is_cut_off(endless_url):
    """Was: mining buffered the whole stream (6.6-8 GiB RSS) until the timeout."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(SourceError, match="sent more than 4,194,304 bytes"):
        read_mcp_url(endless_url, timeout=60, max_bytes=4 * 1024 * 1024)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 512 * 1024  # far below what an unbounded read reaches
