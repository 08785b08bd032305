"""graphene_sched.gym: Gymnasium's checker, determinism, Decima's reward, reference agents."""

from __future__ import annotations

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

import graphene_sched  # noqa: E402
import graphene_sched.gym as gg  # noqa: E402
from conftest import write_trace  # noqa: E402

DAGS = ["tests/data/tpch-2g-q6.json", "traces/example.json"]


def make(**kw):
    args = dict(dags=DAGS, jobs=8, arrival="poisson:5", machines=4)
    args.update(kw)
    return gg.ClusterEnv(**args)


def test_check_env_passes():
    check_env(make(), skip_render_check=True)
    check_env(gg.ClusterEnv("traces/small.csv", machines=3), skip_render_check=True)


def first_candidate(obs, info):
    return {"stage": int(np.flatnonzero(obs["action_mask"])[0]), "limit": 19}


def test_a_random_masked_agent_makes_no_invalid_action():
    """info["action_mask"] marks exactly the candidates: a random agent that samples with it
    is never corrected, while one that samples without it is, nearly always."""
    env = make()
    env.action_space.seed(7)
    obs, info = env.reset(seed=2)
    assert np.array_equal(info["action_mask"]["stage"], obs["action_mask"])
    assert info["action_mask"]["limit"].tolist() == [1] * 20
    masked = gg.run_agent(env, lambda o, i: env.action_space.sample(mask=i["action_mask"]), seed=2)
    assert masked["complete"] and masked["invalid_actions"] == 0
    unmasked = gg.run_agent(env, lambda o, i: env.action_space.sample(), seed=2)
    assert unmasked["invalid_actions"] > unmasked["steps"] // 2


def test_render_draws_the_episode_as_a_gantt_chart():
    """render() is an RGB Gantt chart of the spans; the spans seen at each decision keep the
    machine and start of the final runs (a task's machine is the one it ran on), and ended
    tasks their end; the same seed and actions draw the same bytes."""
    env = make(render_mode="rgb_array")
    obs, info = env.reset(seed=4)
    blank = env.render()
    assert blank.dtype == np.uint8 and blank.shape == (4 * 40, 640, 3)
    assert env.spans() == []
    seen, term, trunc = [], False, False
    while not (term or trunc):
        obs, _, term, trunc, info = env.step(first_candidate(obs, info))
        seen.append(env.spans())
    final = {(j, t): (m, s, e) for j, t, m, s, e in env.spans()}
    assert term and len(final) == info["tasks"] > 0
    assert all(0 <= m < 4 and e >= s for m, s, e in final.values())
    running = 0
    for spans in seen[:-1]:
        for j, t, m, s, e in spans:
            assert final[(j, t)][:2] == (m, s)
            if e == e:
                assert e == final[(j, t)][2]
            else:
                running += 1
    assert running > 0, "some decisions saw tasks still running"
    img = env.render()
    assert (img != 255).any(axis=2).sum() > 0.2 * img.shape[0] * img.shape[1]
    obs, info = env.reset(seed=4)
    term = trunc = False
    while not (term or trunc):
        obs, _, term, trunc, info = env.step(first_candidate(obs, info))
    assert env.render().tobytes() == img.tobytes()
    assert make().render() is None
    with pytest.raises(graphene_sched.UsageError, match="render_mode"):
        make(render_mode="human")


def test_reset_with_a_seed_is_deterministic():
    env = make()
    a = gg.run_agent(env, first_candidate, seed=5)
    b = gg.run_agent(env, first_candidate, seed=5)
    c = gg.run_agent(env, first_candidate, seed=6)
    assert a["steps"] == b["steps"] and a["jct"] == b["jct"] and a["reward"] == b["reward"]
    assert a["jct"] != c["jct"]
    # The observation is the same array, byte for byte.
    o1, _ = env.reset(seed=9)
    o2, _ = env.reset(seed=9)
    for k in o1:
        assert o1[k].tobytes() == o2[k].tobytes()


def test_rewards_add_up_to_minus_the_sum_of_jcts():
    env = make()
    r = gg.run_agent(env, first_candidate, seed=3)
    assert r["complete"] and len(r["jct"]) == 8
    assert r["reward"] == pytest.approx(-sum(r["jct"]), rel=1e-9)


def test_observation_structure():
    env = make()
    obs, info = env.reset(seed=1)
    n = int(obs["node_mask"].sum())
    assert n > 0 and obs["action_mask"].sum() >= 1
    assert np.all(obs["action_mask"] <= obs["node_mask"])
    # Edges join real nodes of the same job, parent before child.
    e = obs["edges"][obs["edges"][:, 0] >= 0]
    assert np.all(e[:, 0] < e[:, 1]) and np.all(e[:, 1] < n)
    assert np.all(obs["node_job"][e[:, 0]] == obs["node_job"][e[:, 1]])
    assert np.all(obs["node_job"][:n] >= 0) and np.all(obs["node_job"][n:] == -1)
    # Candidates are runnable and fit the machine (features 4 and 5).
    cand = np.flatnonzero(obs["action_mask"])
    assert np.all(obs["nodes"][cand, 4] == 1) and np.all(obs["nodes"][cand, 5] == 1)
    assert info["candidates"] == list(cand)


def test_decima_reference_reproduces_the_decima_replay():
    env = make(reference="decima")
    r = gg.run_agent(env, gg.reference_agent(env), seed=2)
    assert r["jct"] == env.baseline("decima")
    assert r["invalid_actions"] == 0


def test_built_in_policies_as_reference_agents():
    for name in ["graphene", "tetris", "cs"]:
        env = make(reference=name)
        r = gg.run_agent(env, gg.reference_agent(env), seed=4)
        assert r["complete"] and r["invalid_actions"] == 0
        assert all(j > 0 for j in r["jct"])
    with pytest.raises(graphene_sched.UsageError):
        gg.reference_agent(make())
    with pytest.raises(graphene_sched.UsageError, match="unknown online scheduler"):
        make(reference="nope").reset(seed=0)


def test_invalid_actions_are_replaced_and_counted():
    env = make()
    r = gg.run_agent(env, lambda o, i: {"stage": env.max_nodes - 1 if o["action_mask"][-1] == 0 else 0, "limit": 3}, seed=1)
    assert r["complete"] and r["invalid_actions"] > 0


def test_time_limit_truncates():
    env = make(time_limit=15.0)
    obs, info = env.reset(seed=1)
    while True:
        obs, rew, term, trunc, info = env.step(first_candidate(obs, info))
        if term or trunc:
            break
    assert trunc and not term and info["time"] == 15.0


def test_vector_env_rolls_out_in_parallel():
    for mode in ["sync", "async"]:
        venv = gg.make_vec(2, vectorization=mode, dags=DAGS, jobs=4, arrival="poisson:5", machines=4)
        try:
            obs, info = venv.reset(seed=[1, 2])
            assert obs["nodes"].shape[0] == 2
            for _ in range(5):
                acts = {"stage": np.array([int(np.flatnonzero(m)[0]) for m in obs["action_mask"]]), "limit": np.array([19, 19])}
                obs, rew, term, trunc, info = venv.step(acts)
                assert rew.shape == (2,) and np.all(rew <= 0)
        finally:
            venv.close()


def test_bad_options_raise():
    with pytest.raises(graphene_sched.UsageError):
        gg.ClusterEnv()
    with pytest.raises(graphene_sched.UsageError):
        gg.ClusterEnv(dags=DAGS, jobs=0)
    with pytest.raises(graphene_sched.GrapheneIOError):
        gg.ClusterEnv(dags=["missing.json"])


def test_sticky_machines_need_no_decision(tmp_path):
    """``sticky=True`` (``replay --sticky``): a machine whose job still has runnable work keeps
    it without asking the agent. One one-slot machine; A: two independent stages of one 10 s
    task at 0, B: one 1 s task at 5. Without the rule the agent is asked again when A's first
    stage ends (its commitment is used up); with it the machine goes on with A's other stage,
    so the agent is asked fewer times, the JCTs are the rule's (A first: 20 and 16 s), and
    ``baseline`` runs under the same rule."""
    trace = tmp_path / "t.csv"
    write_trace(trace, "A,0,q,s1,1,10,1,1,0,0,,", "A,0,q,s2,1,10,1,1,0,0,,", "B,5,q,s,1,1,1,1,0,0,,")
    kw = dict(machines=1, capacity="cpu=1,mem=1,disk=1,net=1")
    last = lambda o, i: {"stage": int(np.flatnonzero(o["action_mask"])[-1]), "limit": 1}  # noqa: E731
    free = gg.run_agent(gg.ClusterEnv(str(trace), **kw), last, seed=0)
    env = gg.ClusterEnv(str(trace), sticky=True, **kw)
    kept = gg.run_agent(env, last, seed=0)
    assert kept["steps"] < free["steps"]
    assert list(kept["jct"]) == [20.0, 16.0]
    assert env.baseline("tetris") == [20.0, 16.0]
    # Drawn workloads take the rule too, and episodes still run to the end.
    a = gg.run_agent(make(sticky=True), first_candidate, seed=5)
    b = gg.run_agent(make(), first_candidate, seed=5)
    assert a["steps"] <= b["steps"] and len(a["jct"]) == len(b["jct"]) == 8


def test_out_of_range_actions_and_seeds_raise():
    """An action outside the action space, a negative or too large seed, or an argument of the
    wrong type raises UsageError naming it; none is cut to fit (a stage of 2**32 was once cut
    to 0 and then indexed the observation out of bounds)."""
    env = gg.ClusterEnv("traces/small.csv", machines=3)
    U64 = "expected an integer from 0 to 18446744073709551615"
    with pytest.raises(graphene_sched.UsageError) as e:
        env.reset(seed=-1)
    assert str(e.value) == f"seed: -1 is out of range ({U64})"
    with pytest.raises(graphene_sched.UsageError, match=r"^seed: 18446744073709551616 is out of range"):
        env.reset(seed=2**64)
    obs, info = env.reset(seed=0)
    top = env.max_nodes - 1
    for action, msg in [
        ({"stage": 2**32, "limit": 0}, rf"^action\['stage'\]: 4294967296 is out of range \(expected an integer from 0 to {top}\)$"),
        ({"stage": -1, "limit": 0}, r"^action\['stage'\]: -1 is out of range"),
        ({"stage": 0, "limit": 20}, r"^action\['limit'\]: 20 is out of range \(expected an integer from 0 to 19\)$"),
        ({"stage": 1.5, "limit": 0}, r"^action\['stage'\]: expected an integer, not float$"),
        ({"stage": 0}, r"^action: expected \{'stage': i, 'limit': k\}, got the keys \['stage'\]$"),
        ("x", r"^action: expected \{'stage': i, 'limit': k\} or a pair, not str$"),
        (None, r"^action: expected .* not None$"),
    ]:
        with pytest.raises(graphene_sched.UsageError, match=msg):
            env.step(action)
    # The episode goes on after a refused action; numpy integers and pairs are actions.
    cand = int(np.flatnonzero(obs["action_mask"])[0])
    obs, r, term, trunc, info = env.step((np.int64(cand), np.int32(19)))
    # The native layer: negative values raise; a node past u32 is counted as invalid, not cut.
    with pytest.raises(graphene_sched.UsageError) as e:
        env._env.step(-1, 0)
    assert str(e.value) == f"node: -1 is out of range ({U64})"
    with pytest.raises(graphene_sched.UsageError, match=r"^level: 18446744073709551616 is out of range"):
        env._env.step(0, 2**64)
    with pytest.raises(graphene_sched.UsageError, match=rf"^seed: -1 is out of range \({U64}\)$"):
        env._env.reset(-1)
    env._env.reset(0)
    d = env._env.step(2**32, 0)
    while not d["done"]:
        d = env._env.step(d["candidates"][0], 19)
    assert d["complete"] and d["invalid_actions"] == 1
    # Constructor arguments.
    for kw, msg in [
        (dict(seed=-1), r"^seed: -1 is out of range"),
        (dict(reward_scale="x"), r"^reward_scale: expected a number, not str$"),
        (dict(max_nodes=0), r"^max_nodes: 0 is out of range"),
        (dict(time_limit="x"), r"^time_limit: expected a number, not str$"),
        (dict(jobs=-1), r"^jobs: -1 is out of range"),
        (dict(reference=3), r"^reference: expected a string, not int$"),
    ]:
        with pytest.raises(graphene_sched.UsageError, match=msg):
            gg.ClusterEnv("traces/small.csv", machines=3, **kw)
    with pytest.raises(graphene_sched.UsageError, match=r"^scheduler: expected a string, not None$"):
        env.baseline(None)
    with pytest.raises(graphene_sched.UsageError, match=r"^num_envs: 0 is out of range"):
        gg.make_vec(0)
    with pytest.raises(graphene_sched.UsageError, match=r"^env: expected a graphene_sched.gym.ClusterEnv, not int$"):
        gg.run_agent(5, first_candidate)
    with pytest.raises(graphene_sched.UsageError, match=r"^agent: expected a callable"):
        gg.run_agent(env, None)
    with pytest.raises(graphene_sched.UsageError, match=r"^env: expected a graphene_sched.gym.ClusterEnv, not str$"):
        gg.reference_agent("env")


# --- FlatMaskedEnv: the spaces of mask-aware RL libraries (sb3-contrib's MaskablePPO) -----------


def play_flat(env, choose, seed):
    """One episode of a FlatMaskedEnv; checks every observation and mask on the way."""
    x, info = env.reset(seed=seed)
    steps, total = 0, 0.0
    while True:
        assert env.observation_space.contains(x)
        assert x.dtype == np.float32 and np.all(np.isfinite(x))
        inner = env.unwrapped._last
        mask = env.action_masks()
        cand = np.zeros(env.unwrapped.max_nodes, bool)
        cand[list(inner["candidates"])] = True
        # The mask is exactly the candidate stages (then every limit level, for MultiDiscrete).
        assert np.array_equal(mask[: len(cand)], cand)
        if env.limit is None:
            assert mask.shape == (len(cand) + 20,) and mask[len(cand):].all()
            assert np.array_equal(info["action_mask"][0], cand.astype(np.int8))
            assert info["action_mask"][1].tolist() == [1] * 20
        else:
            assert mask.shape == (len(cand),)
            assert np.array_equal(info["action_mask"], cand.astype(np.int8))
        x, r, term, trunc, info = env.step(choose(mask, info))
        steps, total = steps + 1, total + r
        if term or trunc:
            return steps, total, info


@pytest.mark.parametrize("limit", [None, 19, 4])
def test_flat_masked_env_random_masked_agent_is_never_invalid(limit):
    """A random agent sampling with the mask makes no invalid action over several workloads;
    one that picks a stage the mask excludes is corrected at every decision: the mask marks
    exactly the valid actions."""
    env = gg.FlatMaskedEnv(make(), limit=limit)
    env.action_space.seed(3)
    for seed in range(4):
        steps, total, info = play_flat(env, lambda m, i: env.action_space.sample(mask=i["action_mask"]), seed)
        assert info["complete"] and info["invalid_actions"] == 0
        assert total == pytest.approx(-sum(info["jct"]), rel=1e-9)
    rng = np.random.default_rng(5)

    def masked_out(mask, info):
        stage = int(rng.choice(np.flatnonzero(~mask[: env.unwrapped.max_nodes])))
        return stage if limit is not None else np.array([stage, int(rng.integers(20))])

    steps, _, info = play_flat(env, masked_out, 1)
    assert info["complete"] and info["invalid_actions"] == steps > 0


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")
def test_flat_masked_env_observation_layout_and_spaces():
    env = gg.FlatMaskedEnv(make())
    inner = env.unwrapped
    assert isinstance(env.action_space, gymnasium.spaces.MultiDiscrete)
    assert env.action_space.nvec.tolist() == [inner.max_nodes, 20]
    assert isinstance(gg.FlatMaskedEnv(make(), limit=19).action_space, gymnasium.spaces.Discrete)
    n, k = inner.max_nodes, inner.max_jobs
    assert env.observation_space.shape == (n * 8 + 3 * n + k * 2 + k,)
    x, _ = env.reset(seed=2)
    obs, _ = inner.reset(seed=2)
    parts = env.unflatten(x)
    for key in ["nodes", "node_mask", "action_mask", "node_job", "jobs", "job_mask"]:
        assert np.array_equal(parts[key], obs[key].astype(parts[key].dtype)), key
    assert np.array_equal(x[env.layout["nodes"]].reshape(n, 8), obs["nodes"])
    # Determinism carries over: the same seed, the same vector.
    assert env.reset(seed=2)[0].tobytes() == x.tobytes()
    check_env(env, skip_render_check=True)
    check_env(gg.FlatMaskedEnv(make(), limit=19), skip_render_check=True)


def test_flat_masked_env_refuses_bad_arguments():
    with pytest.raises(graphene_sched.UsageError, match="ClusterEnv"):
        gg.FlatMaskedEnv(gymnasium.make("CartPole-v1"))
    with pytest.raises(graphene_sched.UsageError, match="limit"):
        gg.FlatMaskedEnv(make(), limit=20)
    env = gg.FlatMaskedEnv(make())
    env.reset(seed=0)
    with pytest.raises(graphene_sched.UsageError, match="shape"):
        env.step(3)
    with pytest.raises(graphene_sched.UsageError, match="stage"):
        env.step(np.array([env.unwrapped.max_nodes, 0]))
    with pytest.raises(graphene_sched.UsageError, match="limit"):
        env.step(np.array([0, 20]))
    with pytest.raises(graphene_sched.UsageError, match="stage"):
        _step_after_reset(gg.FlatMaskedEnv(make(), limit=19), -1)


def _step_after_reset(env, action):
    env.reset(seed=0)
    return env.step(action)


def test_drawn_workloads_spread_over_queues():
    """spread_queues puts a drawn workload's jobs round-robin on that many queues (one per job
    here: drf is then the per-job fair share), as replay's option does for a trace."""
    env = make(spread_queues=8)
    env.reset(seed=3)
    rows = env.workload().csv.splitlines()[1:]
    assert {r.split(",")[0]: r.split(",")[2] for r in rows} == {f"j{i:04d}": f"q{i}" for i in range(8)}
    plain = make()
    plain.reset(seed=3)
    assert {r.split(",")[2] for r in plain.workload().csv.splitlines()[1:]} == {"q0"}
    # The agent's episode is the same workload; only queue-aware policies change.
    assert env.baseline("fifo") == plain.baseline("fifo")
    assert env.baseline("drf") != plain.baseline("drf")
    with pytest.raises(graphene_sched.UsageError, match="spread_queues"):
        make(spread_queues=0)
