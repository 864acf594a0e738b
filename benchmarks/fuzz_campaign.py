"""The fuzzing campaign issue 22 asks for, resumable: 10,000 ordinary programs and 2,000
NaN/±Inf/-0.0/denormal-heavy ones at opt levels 0 and 3 under random schedules, in
chunks of 500 run by ``--jobs`` processes, each chunk's report in ``--out`` (a chunk
whose report exists is skipped, so a stopped campaign goes on where it stopped).

    python benchmarks/fuzz_campaign.py --out benchmarks/records/fuzz_<date>  # ~2.5 h, 2 cores
    python benchmarks/fuzz_campaign.py --out DIR --summary                   # the totals

Run it at a commit that will not change (a ``git worktree`` of it, with ``PYTHONPATH``
pointing at its ``src``): the reports name the commit, and the figure counts only at
the final commit. Edge-heavy chunks go first (seeds 130,000..), then ordinary ones (seeds
30,000..).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CHUNK = 500
PLAN = [("edges", 130_000 + CHUNK * k) for k in range(4)] + \
    [("ordinary", 30_000 + CHUNK * k) for k in range(20)]


def commit() -> str:
    import relayir

    src = Path(relayir.__file__).resolve().parents[2]
    out = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


def run_chunk(out: Path, kind: str, seed: int, rev: str) -> None:
    report = out / f"{kind}_seed{seed}_{rev}.json"
    if report.exists():
        return
    cmd = [sys.executable, "-m", "relayir.testing.fuzz", "--programs", str(CHUNK),
           "--seed", str(seed), "--opt-levels", "0,3", "--schedules", "random",
           "--corpus", str(out / "cases"), "--report", str(report) + ".partial"]
    if kind == "edges":
        cmd += ["--edges", "0.5"]
    with open(out / f"{kind}_seed{seed}_{rev}.log", "w") as log:
        subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False)
    partial = Path(str(report) + ".partial")
    if partial.exists() and json.loads(partial.read_text())["programs"] == CHUNK:
        partial.rename(report)  # complete: counted, and skipped by a resumed campaign


def summary(out: Path) -> dict:
    totals: dict = {}
    for report in sorted(out.glob("*_seed*_*.json")):
        kind, _, rev = report.stem.split("_")
        r = json.loads(report.read_text())
        t = totals.setdefault(f"{kind} at {rev}", {"programs": 0, "seconds": 0.0,
                                                   "finding_seeds": [], "crashes": 0})
        t["programs"] += r["programs"]
        t["seconds"] = round(t["seconds"] + r["seconds"], 1)
        t["finding_seeds"] += sorted({f["seed"] for f in r["findings"]})
        t["crashes"] += len(r["crashes"])
    return totals


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder of the chunks' reports")
    p.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    p.add_argument("--summary", action="store_true", help="print the totals and stop")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.summary:
        rev = commit()
        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(lambda job: run_chunk(out, *job, rev), PLAN))
    print(json.dumps(summary(out), indent=1))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
