"""FIFO written in Python, run by graphene's simulator (a policy as graphene_sched.policy
describes it): jobs in arrival order, each job's stages in order, each stage's tasks taken while
they fit the machine; a stage is left at its first task that does not fit, and its tasks are
read only when its next task fits. Its JCTs equal those of
``graphene replay TRACE --cluster CLUSTER --scheduler fifo``.

    python examples/python_policy.py TRACE CLUSTER OUTDIR

writes OUTDIR/jobs.csv, schedule.csv and summary.json, as ``graphene replay --out OUTDIR`` does,
and prints the mean JCT and the time spent per call of the policy.
"""

from __future__ import annotations

import argparse
from typing import List, Tuple

import graphene_sched as gs
from graphene_sched.policy import View


class Fifo:
    name = "python-fifo"
    # An empty answer depends only on the view: the simulator may skip asking a machine again
    # until something changes (the same replay, fewer calls).
    idle_is_stable = True

    def decide(self, view: View) -> List[Tuple[int, int]]:
        left = list(view.free)
        out: List[Tuple[int, int]] = []
        for stage in view.stages:
            # Most calls find nothing that fits: the stage's next task says so without reading
            # the stage's tasks.
            if not view.fits(stage.demand, left):
                continue
            for t in view.tasks(stage):
                if not view.fits(t.demand, left):
                    break
                left = [x - d for x, d in zip(left, t.demand)]
                out.append((t.job, t.task))
        return out


class FifoEveryTask:
    """The same rule reading ``view.runnable``, every runnable task at every call: simpler to
    write, and what it costs follows the runnable set (BENCHMARKS.md measures both)."""

    name = "python-fifo-every-task"

    def decide(self, view: View) -> List[Tuple[int, int]]:
        left = list(view.free)
        out: List[Tuple[int, int]] = []
        skip = None
        for t in view.runnable:
            if skip == (t.job, t.stage):
                continue
            if view.fits(t.demand, left):
                left = [x - d for x, d in zip(left, t.demand)]
                out.append((t.job, t.task))
            else:
                skip = (t.job, t.stage)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("cluster")
    ap.add_argument("outdir")
    a = ap.parse_args()
    result = gs.replay(a.trace, a.cluster, scheduler=Fifo())
    result.save(a.outdir)
    calls, secs = result.policy_calls or 0, result.policy_seconds or 0.0
    print(f"{result.scheduler}: mean JCT {result.mean_jct:.3f} s over {len(result.jobs)} jobs; "
          f"{calls} calls of decide(), {1e6 * secs / max(calls, 1):.0f} us each")


if __name__ == "__main__":
    main()
