"""The benchmark's timing loop: order of the libraries within rounds, and batched samples of fast calls."""
import time

from coosparse.bench import harness
from coosparse.bench.harness import Impl


def _recording(names, log, sleep=0.0):
    def make(name):
        def fn():
            log.append(name)
            if sleep:
                time.sleep(sleep)
        return Impl(name, fn)
    return [make(n) for n in names]


def test_no_library_always_follows_the_same_peer():
    log = []
    impls = _recording("abc", log, sleep=harness.SAMPLE_S)  # slow enough: one call per sample
    harness.time_alternating(impls, repeat=4, warmup=1)
    rounds = log[3:]
    # round r starts with library r (the first allocation of a round can stall), odd rounds go backwards
    assert [rounds[i:i + 3] for i in range(0, 12, 3)] == [list("abc"), list("bac"), list("cab"), list("acb")]
    followers = {}
    for prev, cur in zip(rounds, rounds[1:]):
        followers.setdefault(cur, set()).add(prev)
    assert all(len(f) >= 2 for f in followers.values())


def test_fast_calls_are_timed_in_batches_and_reported_per_call():
    log = []
    fast, slow = _recording(["fast"], log)[0], _recording(["slow"], log, sleep=2 * harness.SAMPLE_S)[0]
    times = harness.time_alternating([fast, slow], repeat=3, warmup=1)
    assert 1 < fast.calls <= harness.MAX_CALLS and slow.calls == 1
    assert log.count("fast") == 1 + 3 * fast.calls and log.count("slow") == 1 + 3
    assert max(times["fast"]) < harness.SAMPLE_S and min(times["slow"]) >= 2 * harness.SAMPLE_S


def test_without_warmup_the_first_round_calibrates():
    log = []
    fast = _recording(["fast"], log)[0]
    times = harness.time_alternating([fast], repeat=3, warmup=0)
    assert fast.calls > 1 and log.count("fast") == 1 + 2 * fast.calls and len(times["fast"]) == 3


def test_a_custom_timer_is_never_batched():
    fast = _recording(["fast"], [])[0]
    times = harness.time_alternating([fast], repeat=2, warmup=1, timer=lambda fn: (fn(), 1.0)[1])
    assert fast.calls == 1 and times["fast"] == [1.0, 1.0]


def test_rows_say_how_many_calls_each_sample_ran():
    rows = harness.run_case(harness.Case("noop", "w", [Impl("coosparse", lambda: None)]), repeat=2, warmup=1)
    assert rows[0]["calls_per_sample"] > 1 and rows[0]["median_s"] < harness.SAMPLE_S


def test_a_library_with_fewer_rounds_drops_out_of_the_later_rounds_only():
    log = []
    impls = _recording("abc", log, sleep=harness.SAMPLE_S)
    times = harness.time_alternating(impls, repeat=5, warmup=1, rounds={"c": 3})
    assert [len(times[k]) for k in "abc"] == [5, 5, 3]
    rounds = log[3:]
    assert rounds[:9].count("c") == 3 and "c" not in rounds[9:]
    assert rounds[9:] == ["b", "a", "a", "b"]  # rotation and reversal go on over the libraries left


def test_case_rounds_spend_the_time_left_on_coosparse_first_then_the_cheapest():
    from coosparse.bench._worker import case_rounds

    probe = {"pydata": 2.0, "scipy": 0.5, "coosparse": 0.6, "torch": 0.4}
    # three rounds of everything cost 10.5 s: over an 8 s cap, every library still gets three
    assert case_rounds({"repeat": 7, "max_case_s": 8.0}, probe) == {lib: 3 for lib in probe}
    # 12 s: 1.5 s left buys round 4 for coosparse, torch and scipy
    r = case_rounds({"repeat": 7, "max_case_s": 12.0}, probe)
    assert r == {"pydata": 3, "scipy": 4, "coosparse": 4, "torch": 4}
    # with time for all, everybody gets --repeat; without a cap too
    assert set(case_rounds({"repeat": 7, "max_case_s": 100.0}, probe).values()) == {7}
    assert set(case_rounds({"repeat": 2, "max_case_s": 0}, probe).values()) == {2}
    # never more than --repeat, even below three
    assert set(case_rounds({"repeat": 2, "max_case_s": 8.0}, probe).values()) == {2}


def test_run_case_times_the_floor_in_every_round():
    rows = harness.run_case(harness.Case("noop", "w", [Impl("coosparse", lambda: time.sleep(harness.SAMPLE_S)),
                                                       Impl("peer", lambda: time.sleep(harness.SAMPLE_S))]),
                            repeat=4, warmup=1, rounds={"coosparse": 4, "peer": 3})
    n = {r["library"]: len(r["times_s"]) for r in rows}
    assert n == {"coosparse": 4, "peer": 3}
