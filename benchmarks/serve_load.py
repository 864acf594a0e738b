"""A bounded load test of ``relayir serve`` on loopback (127.0.0.1 only).

    python benchmarks/serve_load.py                        # every phase, ~3 minutes
    python benchmarks/serve_load.py --seconds 3 --phases mlp,batching

The server runs in its own process (``relayir serve REPO --no-access-log``); the
clients are ``aiohttp`` coroutines in this one, sending the binary tensor protocol.
Every loop is bounded by ``--seconds`` and by ``--max-requests``. Phases:

- ``overhead``: the server's own overhead on the MLP at batch 1, binary protocol, as the
  issue defines it: ONE client's p50 minus the model's p50. The client is the leanest
  there is (``http.client``, one keep-alive connection, blocking), so that its own CPU
  time, on the cores the server shares, weighs least; the CPU time per request of the
  server process and of this one are reported beside, and the model's p50 with cold
  caches (between two requests the core runs the client and the network stack: mlp's
  weights do not stay in L2), the other bound of its own latency. Then the same
  requests without the network: the ASGI app called in this process (server work
  only: no HTTP parsing, no sockets, no client); and two floors, the same client
  against servers that do no work: uvicorn as ``relayir serve`` configures it with an
  app that answers a canned reply, and a blocking socket loop. No server can beat them
  on this machine;
- ``mlp``: the built-in MLP at batch 1 (graph executor), one client: throughput, p50 and
  p99, and the server's overhead: the client's p50 minus the model's own p50 (measured
  in this process with ``relayir.runtime.load(...).benchmark``), and the server's mean
  time per request (its ``/metrics`` histogram: decode to encode) minus the model's;
- ``resnet18``: resnet18 at batch 1 (224x224), 1 and 2 clients, and 2 clients on two
  instances (``config.json`` ``instances`` 2: two threads, ctypes releases the GIL);
- ``batching``: 32 concurrent clients on the MLP served alone per request, then with
  dynamic batching (``max_batch_size`` 32): a VM artifact with a dynamic batch dim
  (``mlp_batched``), and graph builds at batch 1, 2, 4, ..., 32 (``mlp_sizes``), with
  the CPU time per request of the server and of the clients;
- ``swap``: 8 clients on the MLP while 10 new versions (alternately the graph and the
  AOT build) are dropped into the repository, plus one corrupt version: failed
  requests, p99 during the swaps against the steady p99, and the server's RSS after
  the first and after the last swap.

Figures depend on the machine and on what else runs on it: the clients share its
cores with the server (``--omp-threads 1`` keeps a model's OpenMP team from waiting
for a core the client holds; the load average is in ``meta``).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import numpy as np

import relayir
from relayir.ir.types import Any
from relayir.serve import create_app
from relayir.testing.models import get_workload

PHASES = ("overhead", "mlp", "resnet18", "batching", "swap")
SIZES = (1, 2, 4, 8, 16, 32)  # the graph builds of the MLP that mlp_sizes batches with


# ---------------------------------------------------------------- the repository


def build_repo(root: Path, phases: set[str], threads: int = 0) -> dict[str, Path]:
    """Compile the artifacts the phases serve; returns their paths by name."""
    art = root / "artifacts"
    art.mkdir(parents=True)
    paths = {}

    def save(name, built):
        paths[name] = art / f"{name}.relayir"
        relayir.runtime.wrap(built).save(paths[name])

    mod, params, _ = get_workload("mlp", batch_size=1)
    save("mlp_graph", relayir.build(mod, target="cpu", params=params))
    if "swap" in phases:
        save("mlp_aot", relayir.build(mod, target="cpu", params=params, executor="aot"))
    if "batching" in phases:
        mod, params, _ = get_workload("mlp", batch_size=Any())
        save("mlp_vm", relayir.vm.compile(mod, target="cpu", params=params))
        for b in SIZES:
            mod, params, _ = get_workload("mlp", batch_size=b)
            save(f"mlp_graph_b{b}", relayir.build(mod, target="cpu", params=params))
    if "resnet18" in phases:
        mod, params, _ = get_workload("resnet18", batch_size=1)
        save("resnet18", relayir.build(mod, target="cpu", params=params))
    repo = root / "repo"
    layout = {"mlp": "mlp_graph", "mlp_batched": "mlp_vm", "resnet18": "resnet18",
              "resnet18_x2": "resnet18", "swap": "mlp_graph"}
    for model, source in layout.items():
        if source in paths:
            (repo / model / "1").mkdir(parents=True)
            shutil.copyfile(paths[source], repo / model / "1" / "model.relayir")
    if "mlp_vm" in paths:
        (repo / "mlp_batched" / "config.json").write_text(json.dumps({"max_batch_size": 32}))
        sizes = repo / "mlp_sizes"  # the graph executor at batch 1, 2, 4, ..., 32
        (sizes / "1").mkdir(parents=True)
        for i, b in enumerate(SIZES):
            name = "model.relayir" if i == 0 else f"model.{i}.relayir"
            shutil.copyfile(paths[f"mlp_graph_b{b}"], sizes / "1" / name)
        (sizes / "config.json").write_text(json.dumps({"max_batch_size": SIZES[-1]}))
    if "resnet18" in paths:  # two instances: kernels run while ctypes has released the GIL
        (repo / "resnet18_x2" / "config.json").write_text(json.dumps({"instances": 2}))
    if threads:  # every model's kernel threads per instance (default: the server's choice)
        for model in {*layout, "mlp_sizes"} & {d.name for d in repo.iterdir()}:
            config = repo / model / "config.json"
            doc = json.loads(config.read_text()) if config.is_file() else {}
            config.write_text(json.dumps({**doc, "threads": threads}))
    return {"repo": repo, **paths}


def drop_version(repo: Path, model: str, version: int, source: Path | None,
                 content: bytes | None = None) -> None:
    tmp = repo / model / f".incoming-{version}"
    tmp.mkdir()
    if content is not None:
        (tmp / "model.relayir").write_bytes(content)
    else:
        shutil.copyfile(source, tmp / "model.relayir")
    tmp.rename(repo / model / str(version))


# ---------------------------------------------------------------- the server


class Server:
    def __init__(self, repo: Path):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "relayir", "serve", str(repo), "--port", str(self.port),
             "--no-access-log", "--poll-seconds", "0.2"],
            stderr=subprocess.PIPE, text=True)

    async def ready(self, session: aiohttp.ClientSession, seconds: float = 300) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the server exited: {self.proc.stderr.read()}")
            try:
                async with session.get(f"{self.url}/v2/health/ready") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
        raise SystemExit("the server did not become ready")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far."""
        return cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- the clients


def binary_request(x: np.ndarray) -> tuple[bytes, dict]:
    raw = x.tobytes()
    head = json.dumps({"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                                   "parameters": {"binary_data_size": len(raw)}}],
                       "parameters": {"binary_data_output": True}}).encode()
    return head + raw, {"Inference-Header-Content-Length": str(len(head)),
                        "Content-Type": "application/octet-stream"}


async def load(session, url: str, body: bytes, headers: dict, clients: int, seconds: float,
               max_requests: int, stop: asyncio.Event | None = None
               ) -> list[tuple[float, float, int, str]]:
    """``clients`` concurrent clients for ``seconds`` (``max_requests`` in all at most,
    and until ``stop`` is set): ``(start, latency s, status, version)`` per request."""
    records: list[tuple[float, float, int, str]] = []
    deadline = time.perf_counter() + seconds

    async def client():
        while time.perf_counter() < deadline and len(records) < max_requests \
                and not (stop is not None and stop.is_set()):
            t0 = time.perf_counter()
            try:
                async with session.post(url, data=body, headers=headers) as r:
                    payload = await r.read()
                    status = r.status
            except aiohttp.ClientError:
                status, payload = 599, b""
            version = ""
            if status == 200:
                n = int(r.headers["Inference-Header-Content-Length"])
                version = json.loads(payload[:n])["model_version"]
            records.append((t0, time.perf_counter() - t0, status, version))

    await asyncio.gather(*(client() for _ in range(clients)))
    return records


def summary(records, seconds: float | None = None) -> dict:
    ok = sorted(r[1] for r in records if r[2] == 200)
    if not ok:
        return {"requests": len(records), "failed": len(records)}
    span = seconds or (max(r[0] + r[1] for r in records) - min(r[0] for r in records))
    return {"requests": len(records), "failed": sum(r[2] != 200 for r in records),
            "throughput_rps": round(len(ok) / span, 1),
            "p50_ms": round(ok[len(ok) // 2] * 1e3, 3),
            "p99_ms": round(ok[min(len(ok) - 1, int(len(ok) * 0.99))] * 1e3, 3)}


async def server_mean_ms(session, url: str, model: str) -> tuple[float, int]:
    """The server's latency histogram for ``model``: (sum s, count)."""
    return await _histogram(session, url, "relayir_request_latency_seconds", model)


async def _histogram(session, url: str, name: str, model: str) -> tuple[float, int]:
    async with session.get(f"{url}/metrics") as r:
        text = await r.text()
    total = count = 0.0
    for line in text.splitlines():
        if line.startswith(f'{name}_sum{{model="{model}"}}'):
            total = float(line.split()[-1])
        if line.startswith(f'{name}_count{{model="{model}"}}'):
            count = float(line.split()[-1])
    return total, int(count)


async def batch_rows(session, url: str, model: str) -> tuple[float, int]:
    """The server's batch-size histogram for ``model``: (rows, batches)."""
    return await _histogram(session, url, "relayir_batch_rows", model)


def model_p50_ms(path: Path, x: np.ndarray) -> float:
    model = relayir.runtime.load(path)
    return model.benchmark([x], number=50, repeat=20).median


def model_p50_cold_us(path: Path, x: np.ndarray, runs: int = 300) -> float:
    """The model's p50 when the caches have lost its weights, as they have between two
    requests while the client, the kernel's network stack and other processes ran on
    the core: each run follows a sweep over 8 MB (more than this CPU's L2)."""
    model = relayir.runtime.load(path)
    sweep = np.ones(8 << 20, "uint8")
    times = []
    for _ in range(runs):
        sweep.sum()
        t0 = time.perf_counter()
        model.run([x])
        times.append(time.perf_counter() - t0)
    return sorted(times)[runs // 2] * 1e6


# ---------------------------------------------------------------- the phases


async def phase_single(session, server, paths, name, shape, clients_list, args) -> dict:
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    body, headers = binary_request(x)
    url = f"{server.url}/v2/models/{name}/infer"
    await load(session, url, body, headers, 1, 1.0, 200)  # warm-up
    out = {}
    source = {"mlp": "mlp_graph", "resnet18_x2": "resnet18"}.get(name, name)
    model_ms = model_p50_ms(paths[source], x)
    for clients in clients_list:
        before = await server_mean_ms(session, server.url, name)
        records = await load(session, url, body, headers, clients, args.seconds,
                             args.max_requests)
        after = await server_mean_ms(session, server.url, name)
        row = summary(records, args.seconds)
        row["model_p50_ms"] = round(model_ms, 3)
        if "p50_ms" in row:
            row["client_p50_minus_model_us"] = round((row["p50_ms"] - model_ms) * 1e3, 1)
        n = after[1] - before[1]
        if n:
            server_ms = (after[0] - before[0]) / n * 1e3
            row["server_mean_ms"] = round(server_ms, 3)
            row["server_mean_minus_model_us"] = round((server_ms - model_ms) * 1e3, 1)
        out[f"{clients}_clients"] = row
    return out


def lean_client(port: int, path: str, body: bytes, headers: dict, seconds: float,
                max_requests: int) -> list[float]:
    """One blocking ``http.client`` keep-alive client: the latency of each request (s)."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    deadline = time.perf_counter() + seconds
    try:
        while time.perf_counter() < deadline and len(times) < max_requests:
            t0 = time.perf_counter()
            conn.request("POST", path, body, headers)  # headers and body: one send
            r = conn.getresponse()
            r.read()
            times.append(time.perf_counter() - t0)
            if r.status != 200:
                raise SystemExit(f"{path}: {r.status}")
    finally:
        conn.close()
    return times


# A server that does no work: it reads an HTTP request (Content-Length framed) and
# answers a canned response of argv[1] bytes. What the lean client measures against it
# is the floor of this machine's loopback round trip: no server can be faster.
NOOP_SERVER = r"""
import socket, sys
body = b"x" * int(sys.argv[1])
reply = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
print(srv.getsockname()[1], flush=True)

def serve(conn):
    buf = b""
    while True:
        while b"\r\n\r\n" not in buf:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
        head, buf = buf.split(b"\r\n\r\n", 1)
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        while len(buf) < length:
            buf += conn.recv(65536)
        buf = buf[length:]
        conn.sendall(reply)

while True:  # one connection at a time
    conn, _ = srv.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    serve(conn)
    conn.close()
"""


# The same for uvicorn as relayir serve configures it, with an ASGI app that reads the
# body and answers a canned response: what the HTTP server costs before any relayir code.
UVICORN_SERVER = r"""
import sys
import uvicorn
from relayir.serve.server import _config, bind
body = b"x" * int(sys.argv[1])
start = {"type": "http.response.start", "status": 200,
         "headers": [(b"content-length", str(len(body)).encode()),
                     (b"content-type", b"application/octet-stream")]}

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    while (await receive()).get("more_body"):
        pass
    await send(start)
    await send({"type": "http.response.body", "body": body})

sock = bind("127.0.0.1", 0)
print(sock.getsockname()[1], flush=True)
uvicorn.Server(_config(app)).run(sockets=[sock])
"""


def floor(server_code: str, body: bytes, headers: dict, reply_bytes: int, seconds: float,
          max_requests: int) -> dict:
    """The lean client against ``server_code`` (``NOOP_SERVER``, ``UVICORN_SERVER``):
    latency and CPU per request."""
    proc = subprocess.Popen([sys.executable, "-c", server_code, str(reply_bytes)],
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        lean_client(port, "/", body, headers, 0.5, 200)  # warm-up (and uvicorn started)
        cpu_server, cpu_client = cpu_seconds(proc.pid), time.process_time()
        times = lean_client(port, "/", body, headers, seconds, max_requests)
        cpu_server, cpu_client = cpu_seconds(proc.pid) - cpu_server, \
            time.process_time() - cpu_client
    finally:
        proc.kill()
        proc.wait()
    out = percentiles(times)
    out.update(server_cpu_us_per_request=round(cpu_server / len(times) * 1e6, 1),
               client_cpu_us_per_request=round(cpu_client / len(times) * 1e6, 1))
    return out


def percentiles(times: list[float]) -> dict:
    t = sorted(times)
    return {"requests": len(t), "p50_us": round(t[len(t) // 2] * 1e6, 1),
            "p99_us": round(t[min(len(t) - 1, int(len(t) * 0.99))] * 1e6, 1)}


async def phase_overhead(server, paths, args) -> dict:
    x = np.random.default_rng(0).standard_normal((1, 784)).astype("float32")
    body, headers = binary_request(x)
    path = "/v2/models/mlp/infer"
    lean_client(server.port, path, body, headers, 1.0, 500)  # warm-up
    model_us = model_p50_ms(paths["mlp_graph"], x) * 1e3
    cpu_server, cpu_client = server.cpu_seconds(), time.process_time()
    times = lean_client(server.port, path, body, headers, args.seconds, args.max_requests)
    cpu_server, cpu_client = server.cpu_seconds() - cpu_server, \
        time.process_time() - cpu_client
    net = percentiles(times)
    cold_us = model_p50_cold_us(paths["mlp_graph"], x)
    net.update(model_p50_us=round(model_us, 1),
               overhead_p50_us=round(net["p50_us"] - model_us, 1),
               model_p50_cold_cache_us=round(cold_us, 1),
               overhead_p50_over_cold_model_us=round(net["p50_us"] - cold_us, 1),
               throughput_rps=round(len(times) / sum(times), 1),
               server_cpu_us_per_request=round(cpu_server / len(times) * 1e6, 1),
               client_cpu_us_per_request=round(cpu_client / len(times) * 1e6, 1))
    alone = await in_process(paths["repo"] / "mlp", body, headers, args)
    alone.update(model_p50_us=round(model_us, 1),
                 overhead_p50_us=round(alone["p50_us"] - model_us, 1))
    reply = len(await asyncio.to_thread(reply_of, server.port, path, body, headers))
    return {"one_lean_client": net, "in_process_asgi": alone,
            "floor_uvicorn_canned_reply": floor(UVICORN_SERVER, body, headers, reply,
                                                args.seconds, args.max_requests),
            "floor_socket_canned_reply": floor(NOOP_SERVER, body, headers, reply,
                                               args.seconds, args.max_requests)}


def reply_of(port: int, path: str, body: bytes, headers: dict) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    try:
        conn.request("POST", path, body, headers)
        return conn.getresponse().read()
    finally:
        conn.close()


async def in_process(model_dir: Path, body: bytes, headers: dict, args,
                     clients: int = 1) -> dict:
    """The server's app called in this process, as uvicorn calls it, without a network,
    by ``clients`` concurrent callers: what requests cost the server itself (decode,
    run or batch, encode, metrics). ``model_dir``: a model of the repository."""
    path = f"/v2/models/{model_dir.name}/infer"
    with tempfile.TemporaryDirectory(prefix="relayir-serve-inproc-") as tmp:
        shutil.copytree(model_dir, Path(tmp) / model_dir.name)
        app = create_app(tmp, poll_seconds=0, access_log=False)
        startup, stopped = asyncio.Event(), asyncio.Event()
        events = iter([{"type": "lifespan.startup"}])

        async def lifespan_receive():
            for event in events:
                return event
            await stopped.wait()
            return {"type": "lifespan.shutdown"}

        async def lifespan_send(message):
            if message["type"].startswith("lifespan.startup"):
                startup.set()

        lifespan = asyncio.get_running_loop().create_task(
            app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                lifespan_receive, lifespan_send))
        await startup.wait()
        raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        raw.append((b"content-length", str(len(body)).encode()))
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "POST", "scheme": "http", "path": path,
                 "raw_path": path.encode(), "root_path": "", "query_string": b"",
                 "headers": raw, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 1)}
        message = {"type": "http.request", "body": body, "more_body": False}
        status = []

        async def receive():
            return message

        async def send(m):
            if m["type"] == "http.response.start":
                status.append(m["status"])

        times = []
        deadline = time.perf_counter() + args.seconds

        async def caller():
            while time.perf_counter() < deadline and len(times) < args.max_requests:
                t0 = time.perf_counter()
                await app({**scope, "state": {}}, receive, send)
                times.append(time.perf_counter() - t0)

        cpu, start = time.process_time(), time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(clients)))
        cpu, span = time.process_time() - cpu, time.perf_counter() - start
        stopped.set()
        await lifespan
    if set(status) != {200}:
        raise SystemExit(f"in-process requests answered {sorted(set(status))}")
    out = percentiles(times)
    out.update(throughput_rps=round(len(times) / span, 1),
               cpu_us_per_request=round(cpu / len(times) * 1e6, 1))
    return out


async def phase_batching(session, server, repo: Path, args) -> dict:
    body, headers = binary_request(np.ones((1, 784), "float32"))
    out = {}
    for name in ("mlp", "mlp_batched", "mlp_sizes"):
        url = f"{server.url}/v2/models/{name}/infer"
        await load(session, url, body, headers, 4, 0.5, 200)
        before = await batch_rows(session, server.url, name)
        cpu_server, cpu_client = server.cpu_seconds(), time.process_time()
        records = await load(session, url, body, headers, 32, args.seconds, args.max_requests)
        cpu_server, cpu_client = server.cpu_seconds() - cpu_server, \
            time.process_time() - cpu_client
        out[name] = summary(records, args.seconds)
        # what bounds throughput on a small machine: the CPU each request costs the
        # server process and the clients (this process), against the cores there are
        out[name].update(server_cpu_us_per_request=round(cpu_server / len(records) * 1e6, 1),
                         client_cpu_us_per_request=round(cpu_client / len(records) * 1e6, 1))
        after = await batch_rows(session, server.url, name)
        if after[1] > before[1]:
            out[name]["mean_batch_rows"] = round((after[0] - before[0]) /
                                                 (after[1] - before[1]), 1)
    # the same 32 callers on the app in this process, without HTTP: the most batching
    # can give once a request's HTTP work is taken away
    alone = {name: await in_process(repo / name, body, headers, args, clients=32)
             for name in ("mlp", "mlp_batched", "mlp_sizes")}
    for label, rows in (("", out), ("in_process_", alone)):
        a = rows["mlp"].get("throughput_rps")
        for name in ("mlp_batched", "mlp_sizes"):
            b = rows[name].get("throughput_rps")
            if a and b:
                out[f"{label}{name}_over_unbatched"] = round(b / a, 2)
    out["in_process_32_callers"] = alone
    return out


async def phase_swap(session, server, paths, repo, args) -> dict:
    body, headers = binary_request(np.ones((1, 784), "float32"))
    url = f"{server.url}/v2/models/swap/infer"
    steady = await load(session, url, body, headers, 8, args.seconds, args.max_requests)
    rss = []
    corrupt_ok = None

    async def swapper():
        nonlocal corrupt_ok
        sources = [paths["mlp_aot"], paths["mlp_graph"]]
        for i in range(10):
            version = i + 2
            drop_version(repo, "swap", version, sources[i % 2])
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                async with session.get(f"{server.url}/v2/models/swap") as r:
                    if (await r.json())["versions"] == [str(version)]:
                        break
                await asyncio.sleep(0.05)
            if i == 0 or i == 9:
                rss.append(server.rss_mb())
            if i == 4:  # a corrupt version: reported, and the current one keeps serving
                drop_version(repo, "swap", 100, None, b"corrupt")
                await asyncio.sleep(0.6)
                async with session.get(f"{server.url}/v2/models/swap/ready") as r:
                    doc = await r.json()
                corrupt_ok = (r.status == 200 and doc["versions"]["100"]["state"] ==
                              "UNAVAILABLE")
                shutil.rmtree(repo / "swap" / "100")
            await asyncio.sleep(0.3)

    start = time.perf_counter()
    done = asyncio.Event()
    swap_task = asyncio.get_running_loop().create_task(swapper())
    swap_task.add_done_callback(lambda _: done.set())
    during = await load(session, url, body, headers, 8, 120, args.max_requests * 4, done)
    await swap_task
    steady_s, during_s = summary(steady, args.seconds), summary(during)
    return {"steady": steady_s, "during_swaps": during_s,
            "swap_seconds": round(time.perf_counter() - start, 1),
            "failed_requests": during_s["failed"] + steady_s["failed"],
            "versions_seen": sorted({r[3] for r in during if r[3]}, key=int),
            "p99_during_over_steady": round(during_s["p99_ms"] / steady_s["p99_ms"], 2)
            if "p99_ms" in during_s and "p99_ms" in steady_s else None,
            "rss_mb_after_first_swap": round(rss[0], 1) if rss else None,
            "rss_mb_after_10_swaps": round(rss[-1], 1) if rss else None,
            "corrupt_version_reported_old_serving": corrupt_ok}


async def main_async(args) -> dict:
    phases = set(args.phases.split(","))
    with tempfile.TemporaryDirectory(prefix="relayir-serve-load-") as tmp:
        paths = build_repo(Path(tmp), phases, args.threads)
        repo = paths["repo"]
        server = Server(repo)
        results: dict = {}
        try:
            connector = aiohttp.TCPConnector(limit=64)
            timeout = aiohttp.ClientTimeout(total=60)
            async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
                await server.ready(session)
                if "overhead" in phases:
                    results["overhead_mlp_b1"] = await phase_overhead(server, paths, args)
                if "mlp" in phases:
                    results["mlp_b1"] = await phase_single(session, server, paths, "mlp",
                                                           (1, 784), [1], args)
                if "resnet18" in phases:
                    results["resnet18_b1"] = await phase_single(
                        session, server, paths, "resnet18", (1, 3, 224, 224), [1, 2], args)
                    results["resnet18_b1_2_instances"] = await phase_single(
                        session, server, paths, "resnet18_x2", (1, 3, 224, 224), [2], args)
                if "batching" in phases:
                    results["batching_32_clients"] = await phase_batching(session, server,
                                                                          repo, args)
                if "swap" in phases:
                    results["hot_swap"] = await phase_swap(session, server, paths, repo, args)
        finally:
            server.stop()
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--phases", default=",".join(PHASES))
    p.add_argument("--seconds", type=float, default=5.0, help="per measurement (default 5)")
    p.add_argument("--max-requests", type=int, default=50_000,
                   help="per measurement, at most (default 50000)")
    p.add_argument("--omp-threads", type=int, metavar="N",
                   help="OMP_NUM_THREADS for the server and this process' own model timing "
                        "(default: as the environment says)")
    p.add_argument("--threads", type=int, default=0, metavar="N",
                   help="config.json threads of every model: kernel threads per instance "
                        "(default: the server's choice, 1 for a model run inline)")
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args()
    if args.omp_threads:  # before any kernel library loads OpenMP, here and in the server
        os.environ["OMP_NUM_THREADS"] = str(args.omp_threads)
    results = asyncio.run(main_async(args))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout
    results["meta"] = {"commit": commit.strip(), "cpu": _cpu(), "cores": os.cpu_count(),
                       "python": sys.version.split()[0],
                       "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset"),
                       "load_average": os.getloadavg()[0],
                       "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]])}
    text = json.dumps(results, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


def _cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return "?"
    return next((line.split(":", 1)[1].strip() for line in out.splitlines()
                 if line.startswith("Model name")), "?")


if __name__ == "__main__":
    main()
