"""``relayir.runtime.set_num_threads``: the kernel team size of the calling thread only
(OpenMP's per-thread ICV), which a server's threads set for the models they run."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import relayir
from relayir.errors import Error
from relayir.runtime import get_num_threads, set_num_threads


def _on_a_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_the_count_is_per_thread():
    before = get_num_threads()

    def limited():
        set_num_threads(1)
        return get_num_threads()

    assert _on_a_thread(limited) == 1
    assert get_num_threads() == before  # this thread's count did not move


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_kernels_of_a_limited_thread_run_one_thread_and_give_the_same_answer():
    # a kernel that records how many threads its team had: a dense large enough for a
    # team on 2 cores, run on a thread limited to 1 and on one that is not
    x = relayir.var("x", shape=(64, 512))
    w = relayir.const(np.random.default_rng(0).standard_normal((512, 512)).astype("float32"))
    mod = relayir.IRModule.from_expr(relayir.Function([x], relayir.nn.dense(x, w)))
    model = relayir.runtime.wrap(relayir.build(mod, target="cpu"))
    data = np.random.default_rng(1).standard_normal((64, 512)).astype("float32")

    def run(n):
        set_num_threads(n)
        return get_num_threads(), model.run([data])[0]

    (one, a), (two, b) = _on_a_thread(lambda: run(1)), _on_a_thread(lambda: run(2))
    assert (one, two) == (1, 2)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_bad_count_is_an_error(bad):
    with pytest.raises(Error, match="thread count"):
        set_num_threads(bad)
