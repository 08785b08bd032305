"""Online policies written in Python, run by graphene's simulator.

A policy is any object with a method ``decide(view)``; pass it as ``scheduler=`` to
:func:`graphene_sched.replay`. The simulator calls ``decide`` at every heartbeat of a machine
while runnable work exists, with a read-only :class:`View` of that machine and of every runnable
task, and launches the ``(job, task)`` pairs it returns, in order, on that machine. Everything
else is the built-in policies': events, heartbeats, ``misestimate``, seeds, the validation of
the realized schedule and the three output files. A launch that names no runnable task, repeats
one, or does not fit what the earlier launches left of the machine (on the resources held to
capacity, ``view.hard``) stops the replay with :class:`graphene_sched.UsageError` naming it; an
exception raised by ``decide`` stops it and is raised as it is.

``examples/python_policy.py`` is FIFO written this way; its JCTs equal ``--scheduler fifo``'s.
"""

from __future__ import annotations

from typing import Any, Iterable, List, NamedTuple, Protocol, Tuple

from . import ReplayResult, _core, _src, _tname

__all__ = ["Policy", "Task", "View"]


class Task(NamedTuple):
    """A runnable task as the policy sees it: its requested ``demand`` (one value per resource,
    in ``View.resources`` order) and estimated ``duration`` (both what the policy believes; with
    ``misestimate`` the truth differs)."""

    job: int
    task: int
    stage: int
    demand: Tuple[float, ...]
    duration: float


class View(NamedTuple):
    """One heartbeat: simulated time ``now``, the ``machine`` offering resources, its ``free``
    resources (capacity minus its running tasks' allocations; negative where overbooked) and
    ``capacity``, which resources are ``hard`` (held to capacity; the others may be overbooked),
    and every ``runnable`` task: jobs in arrival order, each job's stages in order, each stage's
    tasks lowest id first."""

    now: float
    machine: int
    free: Tuple[float, ...]
    capacity: Tuple[float, ...]
    hard: Tuple[bool, ...]
    runnable: Tuple[Task, ...]

    def fits(self, demand: Iterable[float], left: Iterable[float]) -> bool:
        """True when ``demand`` fits ``left`` on every hard resource, by the simulator's rule
        (a relative and absolute slack of 1e-9 for sums of floating-point demands)."""
        return all(not h or d <= x * (1 + 1e-9) + 1e-9 for h, d, x in zip(self.hard, demand, left))


class Policy(Protocol):
    """What ``replay(scheduler=...)`` accepts: ``decide(view)`` returns the ``(job, task)``
    pairs to launch on ``view.machine`` now (an empty list launches nothing). An optional
    ``name`` attribute is what the outputs record (default: the class name)."""

    def decide(self, view: View) -> Iterable[Tuple[int, int]]: ...


def _replay(trace: Any, trace_name: str, policy: Any, opts: Any) -> ReplayResult:
    decide = getattr(policy, "decide", None)
    if not callable(decide):
        raise _core.UsageError(f"scheduler: expected a scheduler name or an object with a decide(view) method, not {_tname(policy)}")
    name = getattr(policy, "name", None)
    if not isinstance(name, str) or not name:
        name = type(policy).__name__

    def call(d: dict) -> List[Tuple[int, int]]:
        view = View(
            d["now"],
            d["machine"],
            tuple(d["free"]),
            tuple(d["capacity"]),
            tuple(d["hard"]),
            tuple(Task(j, t, s, tuple(dem), dur) for j, t, s, dem, dur in d["runnable"]),
        )
        out = decide(view)
        try:
            return [(int(j), int(t)) for j, t in out]
        except (TypeError, ValueError):
            raise _core.UsageError(f"decide() must return (job, task) pairs, not {_tname(out)}") from None

    jobs, sched, summary, calls, spent = _core.replay_policy(_src(trace, "trace"), trace_name, call, name, opts)
    result = ReplayResult(jobs, sched, summary)
    result.policy_calls = calls
    result.policy_seconds = spent
    return result
