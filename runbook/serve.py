"""The author's loop: build, serve the site on localhost, rebuild when a source changes, reload the
open page.

The build runs in a fresh Python each time, so a change to calc/ is picked up like a change to
content. Pages are served as built, with one script added that asks the server which build it is
on and reloads when that changes; the page's policy is widened to let it ask this server only.
While the sources have a fault, every page is replaced by the fault itself, `file:line: what is
wrong`, and comes back on its own once the fault is fixed.
"""
from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import threading
import time
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

VERSION_PATH = "/__runbook__/build"
CLOSED = re.compile(r"connect-src (?:'|&#39;)none(?:'|&#39;)")
POLL_S = 0.4

RELOADER = """<script>
(function () {
  var seen = %s;
  function ask() {
    fetch("%s", { cache: "no-store" }).then(function (r) { return r.json(); }).then(function (state) {
      if (state.build !== seen) location.reload();
      else setTimeout(ask, 500);
    }, function () { setTimeout(ask, 2000); });
  }
  setTimeout(ask, 500);
})();
</script>"""

FAULT_PAGE = """<!doctype html>
<html lang="en-GB"><head><meta charset="utf-8"><title>Build stopped</title>
<style>body {{ font: 16px/1.5 system-ui, sans-serif; margin: 3rem; color: #1c1917; }}
pre {{ background: #fef2f2; border-left: 5px solid #b91c1c; padding: 1rem 1.2rem; white-space: pre-wrap; }}</style>
</head><body><h1>The build stopped</h1>
<pre class="build-fault">{fault}</pre>
<p>Fix it and save: this page reloads by itself.</p>
{reloader}</body></html>"""


class Builds:
    """The latest build's number and, if it failed, what the build said."""

    def __init__(self, command: list[str]):
        self.command = command
        self.number = 0
        self.fault = ""
        self.lock = threading.Lock()

    def run(self) -> None:
        result = subprocess.run(self.command, capture_output=True, text=True)
        with self.lock:
            self.number += 1
            self.fault = "" if result.returncode == 0 else _fault_of(result.stderr)
        print(self.fault or f"rebuilt ({self.number})", file=sys.stderr if self.fault else sys.stdout, flush=True)


def _fault_of(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line and "previous site is untouched" not in line]
    return "\n".join(lines[-12:]) or "the build failed without a message"


def sources_state(folders: list[Path]) -> tuple:
    """Every file under the watched folders with its modification time and size."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                stat = path.stat()
                found.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(found)


def watch(builds: Builds, folders: list[Path], stop: threading.Event) -> None:
    state = sources_state(folders)
    while not stop.wait(POLL_S):
        now = sources_state(folders)
        if now != state:
            time.sleep(0.1)  # let an editor finish writing
            state = sources_state(folders)
            builds.run()


class Handler(SimpleHTTPRequestHandler):
    builds: Builds

    def log_message(self, format: str, *args) -> None:  # the terminal shows builds, not requests
        pass

    def do_GET(self) -> None:
        if self.path == VERSION_PATH:
            return self._send(json.dumps({"build": self.builds.number}).encode(), "application/json")
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path == "/":
            path = "/index.html"
        if not path.endswith(".html"):
            return super().do_GET()
        with self.builds.lock:
            number, fault = self.builds.number, self.builds.fault
        reloader = RELOADER % (number, VERSION_PATH)
        if fault:
            page = FAULT_PAGE.format(fault=html.escape(fault), reloader=reloader)
            return self._send(page.encode(), "text/html; charset=utf-8")
        file = Path(self.directory) / path.lstrip("/")
        if not file.is_file():
            return self.send_error(HTTPStatus.NOT_FOUND)
        page = CLOSED.sub("connect-src 'self'", file.read_text(encoding="utf-8"), count=1)
        page = page.replace("</body>", reloader + "\n</body>", 1)
        self._send(page.encode("utf-8"), "text/html; charset=utf-8")

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


def serve(build_command: list[str], out: Path, folders: list[Path], port: int) -> None:
    """Build, then serve `out` on 127.0.0.1 until interrupted, rebuilding on every change."""
    builds = Builds(build_command)
    builds.run()
    out.mkdir(parents=True, exist_ok=True)
    handler = type("RunbookHandler", (Handler,), {"builds": builds})
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(handler, directory=str(out)))
    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(builds, folders, stop), daemon=True)
    watcher.start()
    print(f"serving http://127.0.0.1:{server.server_address[1]}/ — watching "
          f"{', '.join(str(f) for f in folders)}; Ctrl+C stops", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()
