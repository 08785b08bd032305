"""Online policies written in Python, run by graphene's simulator.

A policy is any object with a method ``decide(view)``; pass it as ``scheduler=`` to
:func:`graphene_sched.replay`. The simulator calls ``decide`` at every heartbeat of a machine
while runnable work exists, with a read-only :class:`View` of that machine and of the runnable
stages and tasks, and launches the ``(job, task)`` pairs it returns, in order, on that machine. Everything
else is the built-in policies': events, heartbeats, ``misestimate``, seeds, the validation of
the realized schedule and the three output files. A launch that names no runnable task, repeats
one, or does not fit what the earlier launches left of the machine (on the resources held to
capacity, ``view.hard``) stops the replay with :class:`graphene_sched.UsageError` naming it; an
exception raised by ``decide`` stops it and is raised as it is.

``examples/python_policy.py`` is FIFO written this way; its JCTs equal ``--scheduler fifo``'s.
"""

from __future__ import annotations

from typing import Any, Iterable, List, NamedTuple, Optional, Protocol, Tuple, Union

from . import ReplayResult, _core, _src, _tname

__all__ = ["Policy", "Stage", "Task", "View"]


class Task(NamedTuple):
    """A runnable task as the policy sees it: its requested ``demand`` (one value per resource,
    in ``View.resources`` order) and estimated ``duration`` (both what the policy believes; with
    ``misestimate`` the truth differs)."""

    job: int
    task: int
    stage: int
    demand: Tuple[float, ...]
    duration: float


class Stage(NamedTuple):
    """A runnable stage: its ``job`` and ``stage``, how many of its ``tasks`` are runnable, and
    what the policy believes of the next one (the lowest id): ``demand``, ``duration`` and its
    id, ``task``. ``index`` is the stage's place in ``View.stages``, for :meth:`View.tasks`."""

    index: int
    job: int
    stage: int
    tasks: int
    demand: Tuple[float, ...]
    duration: float
    task: int


class View:
    """One heartbeat, read-only: simulated time ``now``, the ``machine`` offering resources, its
    ``free`` resources (capacity minus its running tasks' allocations; negative where overbooked)
    and ``capacity``, which resources are ``hard`` (held to capacity; the others may be
    overbooked), and the runnable work: ``stages`` (one :class:`Stage` per runnable stage: jobs
    in arrival order, each job's stages in order), :meth:`tasks` (one stage's runnable tasks,
    lowest id first) and ``runnable`` (every runnable task, in the same order). Each is built
    when first read, so a policy that goes stage by stage and reads the tasks only of the stages
    it launches from costs what it reads, not what is runnable."""

    __slots__ = ("now", "machine", "free", "capacity", "hard", "_core", "_stages", "_runnable")

    def __init__(self, core: Any) -> None:
        now, machine, free, capacity, hard = core.head()
        self.now: float = now
        self.machine: int = machine
        self.free: Tuple[float, ...] = tuple(free)
        self.capacity: Tuple[float, ...] = tuple(capacity)
        self.hard: Tuple[bool, ...] = tuple(hard)
        self._core = core
        self._stages: Optional[Tuple[Stage, ...]] = None
        self._runnable: Optional[Tuple[Task, ...]] = None

    @property
    def stages(self) -> Tuple[Stage, ...]:
        if self._stages is None:
            self._stages = tuple(Stage(i, j, s, n, tuple(d), dur, t) for i, (j, s, n, d, dur, t) in enumerate(self._core.stage_rows()))
        return self._stages

    def tasks(self, stage: Union[Stage, int]) -> Tuple[Task, ...]:
        """The runnable tasks of ``stage`` (a :class:`Stage` of this view, or its index)."""
        i = stage.index if isinstance(stage, Stage) else stage
        return tuple(Task(j, t, s, tuple(d), dur) for j, t, s, d, dur in self._core.stage_tasks(i))

    @property
    def runnable(self) -> Tuple[Task, ...]:
        if self._runnable is None:
            self._runnable = tuple(Task(j, t, s, tuple(d), dur) for j, t, s, d, dur in self._core.task_rows())
        return self._runnable

    def fits(self, demand: Iterable[float], left: Iterable[float]) -> bool:
        """True when ``demand`` fits ``left`` on every hard resource, by the simulator's rule
        (a relative and absolute slack of 1e-9 for sums of floating-point demands)."""
        return all(not h or d <= x * (1 + 1e-9) + 1e-9 for h, d, x in zip(self.hard, demand, left))


class Policy(Protocol):
    """What ``replay(scheduler=...)`` accepts: ``decide(view)`` returns the ``(job, task)``
    pairs to launch on ``view.machine`` now (an empty list launches nothing). An optional
    ``name`` attribute is what the outputs record (default: the class name). An optional
    ``idle_is_stable = True`` declares that an empty answer depends on the view alone (not on
    ``now``, a random draw or the policy's own state): the simulator then does not ask a
    machine again until a job arrives or a task launches or ends, which gives the same replay
    with far fewer calls on a busy cluster (FIFO, Tetris-like packers: yes; a policy that waits
    for a time or learns from its calls: no)."""

    def decide(self, view: View) -> Iterable[Tuple[int, int]]: ...


def _replay(trace: Any, trace_name: str, policy: Any, opts: Any) -> ReplayResult:
    decide = getattr(policy, "decide", None)
    if not callable(decide):
        raise _core.UsageError(f"scheduler: expected a scheduler name or an object with a decide(view) method, not {_tname(policy)}")
    name = getattr(policy, "name", None)
    if not isinstance(name, str) or not name:
        name = type(policy).__name__

    def call(core: Any) -> List[Tuple[int, int]]:
        out = decide(View(core))
        try:
            return [(int(j), int(t)) for j, t in out]
        except (TypeError, ValueError):
            raise _core.UsageError(f"decide() must return (job, task) pairs, not {_tname(out)}") from None

    stable = getattr(policy, "idle_is_stable", False)
    if not isinstance(stable, bool):
        raise _core.UsageError(f"idle_is_stable: expected True or False, not {_tname(stable)}")
    jobs, sched, summary, calls, spent = _core.replay_policy(_src(trace, "trace"), trace_name, call, name, stable, opts)
    result = ReplayResult(jobs, sched, summary)
    result.policy_calls = calls
    result.policy_seconds = spent
    return result
