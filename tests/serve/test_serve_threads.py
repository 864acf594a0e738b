"""How many kernel threads a served model's instances use: one for a model run inline on
the event loop's thread, the cores shared between the instances otherwise, or the
``threads`` of its config.json; each running thread has its team set to that."""

from __future__ import annotations

import asyncio
import os
import threading

import numpy as np
import pytest
from serve_fixtures import make_repo

from relayir.errors import Error
from relayir.runtime import get_num_threads
from relayir.serve.repository import ModelConfig, VersionFiles
from relayir.serve.version import ModelVersion

CORES = len(os.sched_getaffinity(0))


def _version(artifacts, tmp_path, config: dict) -> ModelVersion:
    repo = make_repo(tmp_path, {"m": {1: [artifacts["graph_b1"]]}}, {"m": config})
    files = VersionFiles(1, [repo / "m" / "1" / "model.relayir"], ())
    v = ModelVersion("m", files, ModelConfig.read(repo / "m"))
    v.load()
    assert v.state == "READY", v.error
    return v


def _team_of(v: ModelVersion) -> int:
    """The kernel team size on the thread that runs ``v``'s requests (an event loop on
    a thread of its own: an inline model sets the team of the loop's thread)."""
    def probe(arrays, rows):
        return get_num_threads()

    out = []
    loop_thread = threading.Thread(target=lambda: out.append(asyncio.run(
        v.workers.call(probe, [np.ones((1, 784), "float32")], 1))))
    loop_thread.start()
    loop_thread.join()
    return out[0]


@pytest.mark.parametrize("config, inline, threads", [
    ({"inline_below_us": 10**9}, True, 1),
    ({"inline_below_us": 0}, False, CORES),
    ({"inline_below_us": 0, "instances": 2}, False, max(1, CORES // 2)),
    ({"inline_below_us": 0, "threads": 3}, False, 3),
    ({"inline_below_us": 10**9, "threads": 2}, True, 2),
])
def test_the_team_size_of_each_kind_of_instance(artifacts, tmp_path, config, inline,
                                               threads):
    v = _version(artifacts, tmp_path, config)
    try:
        assert v.inline is inline and v.threads == threads
        assert _team_of(v) == threads
    finally:
        v.workers.close()


def test_a_bad_threads_value_is_refused(tmp_path):
    (tmp_path / "config.json").write_text('{"threads": -1}')
    with pytest.raises(Error, match="threads must be an integer >= 0"):
        ModelConfig.read(tmp_path)
