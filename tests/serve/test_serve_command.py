"""``relayir serve`` as a user runs it: a process on a free loopback port that answers,
and exits 0 on SIGTERM after finishing what is in flight."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import numpy as np
from serve_fixtures import infer_json, make_repo


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_help_shows_examples_and_the_layout():
    r = subprocess.run([sys.executable, "-m", "relayir", "serve", "--help"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    assert "relayir serve repo" in r.stdout and "REPO/<model>/<version>/model.relayir" in r.stdout


def test_a_missing_repository_is_a_one_line_error(tmp_path):
    r = subprocess.run([sys.executable, "-m", "relayir", "serve", str(tmp_path / "none")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "not a directory" in r.stderr


def test_serves_and_drains_on_sigterm(artifacts, tmp_path):
    repo = make_repo(tmp_path / "repo", {"mlp": {1: [artifacts["graph_b1"]]}})
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "relayir", "serve", str(repo), "--port",
                             str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                if httpx.get(f"{url}/v2/health/ready").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not become ready"
            time.sleep(0.1)
        statuses = []

        def requests():  # bounded: 200 requests at most, until the server goes away
            with httpx.Client(base_url=url, timeout=30) as c:
                for _ in range(200):
                    try:
                        r = c.post("/v2/models/mlp/infer",
                                   json=infer_json("data", np.ones((1, 784), "float32")))
                    except httpx.TransportError:
                        return
                    statuses.append(r.status_code)

        t = threading.Thread(target=requests)
        t.start()
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)
        t.join(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    out, err = proc.communicate()
    assert rc == 0, err
    assert statuses and set(statuses) == {200}
    assert "model mlp version 1 ready" in err
    assert '"path": "/v2/models/mlp/infer", "status": 200' in err  # the access log


def test_import_relayir_does_not_import_the_serve_dependencies():
    code = ("import sys, relayir, relayir.cli.commands; "
            "print(sorted(m for m in ('starlette', 'uvicorn', 'prometheus_client', 'ray') "
            "if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
