"""A local index for make/devpy.sh: serves one project page, then stalls the wheel download
after a few bytes of the length it announced (what a cut or stalled connection does)."""

from __future__ import annotations

import http.server
import socketserver
import sys
import time


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/simple/"):
            body = (b'<a href="/files/blinker-1.9.0-py3-none-any.whl">'
                    b"blinker-1.9.0-py3-none-any.whl</a>")
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Length", "3000000")
        self.end_headers()
        self.wfile.write(b"PK" * 8)
        self.wfile.flush()
        time.sleep(20)


if __name__ == "__main__":
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler) as server:
        server.daemon_threads = True
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            out.write(str(server.server_address[1]))
        server.serve_forever()
