"""``relayir serve REPO``: serve a model repository over the Open Inference Protocol
(``relayir.serve``; its dependencies come with ``pip install "relayir[serve]"``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .command import Command, positive_int
from .console import Console
from .runners import CommandError

LAYOUT = """\
repository layout (as Triton and OpenVINO Model Server lay it out):
  REPO/<model>/config.json                  optional: {"max_batch_size": 32,
                                            "max_queue_delay_us": 500, "instances": 2,
                                            "threads": 1, "inline_below_us": 50}
                                            threads: kernel threads per instance (default:
                                            1 inline, else the cores / instances);
                                            inline_below_us: a model faster than this runs
                                            on the event loop, no thread hop (0: never)
  REPO/<model>/<version>/model.relayir      written by relayir compile (graph, vm or aot)
  REPO/<model>/<version>/model.<k>.relayir  optional: the same model at other batch sizes

A new version directory (a higher number) is loaded and warmed up while the current one
serves, then takes over; a version that fails to load is logged and shown by
/v2/models/<model>/ready, and the current one keeps serving.

endpoints (KServe v2): /v2/health/live, /v2/health/ready, /v2/models/<m>[/versions/<v>],
  .../ready, .../infer (JSON or binary tensors), /v2/repository/index,
  /v2/repository/models/<m>/load|unload, /metrics (Prometheus)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("repo", metavar="REPO", help="the model repository (a directory)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--poll-seconds", type=float, default=1.0, metavar="S",
                   help="how often to look for new versions; 0: never (default: 1)")
    p.add_argument("--max-body-bytes", type=positive_int, default=64 << 20, metavar="N",
                   help="the largest request body; larger is 413 (default: 64 MiB)")
    p.add_argument("--no-access-log", action="store_true",
                   help="no JSON line per request on stderr")
    p.epilog = f"{p.epilog}\n\n{LAYOUT}" if p.epilog else LAYOUT


def run(args, console: Console) -> int:
    if not Path(args.repo).is_dir():
        raise CommandError(f"{args.repo}: the model repository is not a directory")
    try:  # the serve extra stays optional: relayir's other commands do not need it
        from ..serve import server
    except ImportError as exc:
        raise CommandError(f"relayir serve needs starlette, uvicorn and prometheus_client "
                           f"({exc}); install them with pip install 'relayir[serve]'") from None
    return server.serve(args.repo, args.host, args.port, args.poll_seconds,
                        args.max_body_bytes, not args.no_access_log)


COMMAND = Command(
    "serve", "serve compiled models over HTTP (Open Inference Protocol / KServe v2)",
    "Serve every model in REPO over the Open Inference Protocol (KServe v2, as Triton and "
    "OpenVINO Model Server speak it; Triton's clients work unchanged): JSON and binary "
    "tensors, hot swap of new versions, dynamic batching, Prometheus metrics.",
    ("relayir serve repo",
     "relayir serve repo --port 8001 --poll-seconds 5",
     "mkdir -p repo/resnet/1 && relayir compile resnet.onnx -o repo/resnet/1/model.relayir",
     "curl localhost:8000/v2/models/resnet",
     "curl -X POST localhost:8000/v2/models/mlp/infer -d "
     "'{\"inputs\": [{\"name\": \"data\", \"shape\": [1, 784], \"datatype\": \"FP32\", "
     "\"data\": [...]}]}'",
     "python -c 'import tritonclient.http as t; "
     "print(t.InferenceServerClient(\"localhost:8000\").get_model_metadata(\"resnet\"))'"),
    add_arguments, run)

__all__ = ["COMMAND"]
