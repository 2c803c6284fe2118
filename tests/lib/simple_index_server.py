"""A static file server that content-negotiates a `rocm-wheel index` as PyPI does.

    simple_index_server.py DIR LOG

Serves DIR on 127.0.0.1 (a free port, announced as http.server does:
`Serving HTTP on 127.0.0.1 port N`). A directory URL answers with its `index.json` as
`application/vnd.pypi.simple.v1+json` when the client's Accept header
prefers that over HTML (PEP 691), else with `index.html` as
`application/vnd.pypi.simple.v1+html`; other files as they are. LOG gets
one line per page answered, `<form> <path>`: which form each client read.
"""

import http.server
import os
import sys
import threading


def wants_json(accept):
    """Whether the PEP 691 JSON form ranks above HTML in `accept` (q-values, default 1)."""
    best = {"json": -1.0, "html": -1.0}
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        q = 1.0
        for f in fields[1:]:
            if f.startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        kind = fields[0].lower()
        if kind == "application/vnd.pypi.simple.v1+json":
            best["json"] = max(best["json"], q)
        elif kind in ("application/vnd.pypi.simple.v1+html", "text/html"):
            best["html"] = max(best["html"], q)
    return best["json"] > 0 and best["json"] > best["html"]


def main():
    root, log_path = sys.argv[1], sys.argv[2]
    lock = threading.Lock()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=root, **kw)

        def log_message(self, *args):
            pass

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            local = os.path.join(root, path.lstrip("/"))
            if os.path.isdir(local):
                form = "json" if wants_json(self.headers.get("Accept", "")) else "html"
                page = os.path.join(local, "index." + form)
                if os.path.isfile(page):
                    data = open(page, "rb").read()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/vnd.pypi.simple.v1+" + form)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    with lock, open(log_path, "a") as log:
                        log.write("%s %s\n" % (form, path))
                    return
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("Serving HTTP on 127.0.0.1 port %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
