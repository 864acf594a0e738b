"""``RayRunner``: compile and measure candidates on a Ray cluster.

Each job (one batch's C source, its kernel names and the task's data: strings and
arrays, see ``measure.Job``) becomes a Ray task that runs ``measure.run_job`` on
whichever node Ray picks: the node compiles the source with its own C compiler
(``-march=native`` for its CPU, cached there) and measures each candidate in its own
process, as ``LocalRunner`` does here; results (with the node's CPU) come back to the
tuner. A Ray worker or node lost mid-job is Ray's to retry (``max_retries``): the job
runs again elsewhere, and only a job that still fails becomes error results — never a
failed tuning run.

Measurements must not share cores: a job asks for ``cpus_per_job`` CPUs (default: the
smallest node's count), so each node measures one job at a time. ``ray`` is optional:
``pip install "relayir[distributed]"``. Every node needs relayir and a C compiler.
"""

from __future__ import annotations

from .measure import Job, MeasureOptions, MeasureResult, run_job
from .runner import Runner
from .task import TuningError


def _import_ray():
    """Ray, imported when a ``RayRunner`` is made: it is optional, and ``import relayir``
    must neither need it nor pay its import time."""
    try:
        import ray
    except ImportError:
        raise TuningError('RayRunner needs ray: pip install "relayir[distributed]"') from None
    return ray


def _run_remote(job: Job, options: MeasureOptions) -> list[MeasureResult]:
    return run_job(job, options)


class RayRunner(Runner):
    """``RayRunner(address=None)``: no address uses the Ray instance this process is
    connected to (``ray.init()`` done by the caller), else starts a local one;
    ``address="ray://head:10001"`` or ``"auto"`` connects to a cluster."""

    def __init__(self, address: str | None = None, number: int = 1, repeat: int = 10,
                 min_repeat_ms: float = 10.0, timeout: float = 30.0,
                 flush_cache: bool = False, cpus_per_job: float | None = None,
                 max_retries: int = 3):
        super().__init__(number, repeat, min_repeat_ms, timeout, flush_cache)
        self._ray = ray = _import_ray()
        if not ray.is_initialized():
            ray.init(address=address, log_to_driver=False)
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        smallest = min((n["Resources"].get("CPU", 1.0) for n in nodes), default=1.0)
        self.cpus_per_job = cpus_per_job or max(smallest, 1.0)
        self._remote = ray.remote(num_cpus=self.cpus_per_job, max_retries=max_retries)(
            _run_remote)

    @property
    def parallelism(self) -> int:
        cpus = self._ray.cluster_resources().get("CPU", 1.0)
        return max(1, int(cpus // self.cpus_per_job))

    def run(self, jobs: list[Job]) -> list[list[MeasureResult]]:
        refs = [self._remote.remote(job, self.options) for job in jobs]
        wait = self.options.timeout * 4 * max(len(j.names) for j in jobs) + 600 if jobs else 0
        ray, out = self._ray, []
        for job, ref in zip(jobs, refs):
            try:
                out.append(ray.get(ref, timeout=wait))
            except (ray.exceptions.RayError, TimeoutError) as exc:
                why = f"ray: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                out.append([MeasureResult((), why)] * len(job.names))
        return out


__all__ = ["RayRunner"]
