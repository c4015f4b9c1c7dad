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
    rounds = log[3 * (1 + harness.CALIBRATION_CALLS):]  # each priced by its calibration calls too
    # round r starts with library r (the first allocation of a round can stall), odd rounds go backwards
    assert [rounds[i:i + 3] for i in range(0, 12, 3)] == [list("abc"), list("bac"), list("cab"), list("acb")]
    followers = {}
    for prev, cur in zip(rounds, rounds[1:]):
        followers.setdefault(cur, set()).add(prev)
    assert all(len(f) >= 2 for f in followers.values())


def test_fast_calls_are_timed_in_batches_and_reported_per_call():
    log = []
    fast, slow = _recording(["fast"], log)[0], _recording(["slow"], log, sleep=harness.CALIBRATE_BELOW_S)[0]
    times = harness.time_alternating([fast, slow], repeat=3, warmup=1)
    assert 1 < fast.calls <= harness.MAX_CALLS and slow.calls == 1
    assert log.count("fast") == 1 + harness.CALIBRATION_CALLS + 3 * fast.calls and log.count("slow") == 1 + 3
    assert max(times["fast"]) < harness.SAMPLE_S and min(times["slow"]) >= harness.CALIBRATE_BELOW_S


def test_without_warmup_the_first_round_calibrates():
    log = []
    fast = _recording(["fast"], log)[0]
    times = harness.time_alternating([fast], repeat=3, warmup=0)
    assert fast.calls > 1 and log.count("fast") == 1 + harness.CALIBRATION_CALLS + 2 * fast.calls
    assert len(times["fast"]) == 3


def test_a_fast_call_slow_once_is_sized_by_its_warm_calls():
    calls = []

    def cold_once():  # the warm-up call meets cold caches: 10x its warm time
        calls.append(1)
        time.sleep(harness.SAMPLE_S / 2 if len(calls) == 1 else harness.SAMPLE_S / 20)

    fast = Impl("fast", cold_once)
    harness.time_alternating([fast], repeat=2, warmup=1)
    assert fast.calls >= 4  # sized by the warm calls (~15-20), not by the cold one (2)


def test_a_fast_call_whose_warmup_stalled_past_a_sample_is_still_batched():
    calls = []

    def stalled_once():  # the warm-up call waited for a core: longer than a whole sample
        calls.append(1)
        time.sleep(2 * harness.SAMPLE_S if len(calls) == 1 else harness.SAMPLE_S / 20)

    fast = Impl("fast", stalled_once)
    times = harness.time_alternating([fast], repeat=2, warmup=1)
    assert fast.calls >= 4 and max(times["fast"]) < harness.SAMPLE_S


def test_a_custom_timer_is_never_batched():
    fast = _recording(["fast"], [])[0]
    times = harness.time_alternating([fast], repeat=2, warmup=1, timer=lambda fn: (fn(), 1.0)[1])
    assert fast.calls == 1 and times["fast"] == [1.0, 1.0]


def test_rows_say_how_many_calls_each_sample_ran():
    rows = harness.run_case(harness.Case("noop", "w", [Impl("coosparse", lambda: None)]), repeat=2, warmup=1)
    assert rows[0]["calls_per_sample"] > 1 and rows[0]["median_s"] < harness.SAMPLE_S


def test_a_budget_drops_the_slow_library_from_the_later_rounds_only():
    log = []
    fast = _recording("ab", log, sleep=harness.SAMPLE_S)
    slow = _recording("c", log, sleep=40 * harness.SAMPLE_S)
    # three rounds cost 0.63 s and more; the 0.15 s or less left buys rounds of the fast ones only
    times = harness.time_alternating(fast + slow, repeat=5, warmup=1, budget=0.78)
    assert [len(times[k]) for k in "abc"] == [5, 5, 3]
    rounds = log[2 * (1 + harness.CALIBRATION_CALLS) + 1:]  # a and b priced by calibration calls too
    assert rounds[:9].count("c") == 3 and "c" not in rounds[9:]
    assert rounds[9:] == ["b", "a", "a", "b"]  # rotation and reversal go on over the libraries left


def test_plan_rounds_spends_the_time_left_on_coosparse_first_then_the_cheapest():
    costs = {"pydata": 2.0, "scipy": 0.5, "coosparse": 0.6, "torch": 0.4}
    # three rounds of everything cost 10.5 s, over an 8 s budget: the reserve (2 s) still buys
    # rounds 4 for coosparse, torch and scipy (1.5 s), then of the 0.5 s left round 5 for torch only
    assert harness.plan_rounds(costs, 7, 8.0) == {"pydata": 3, "scipy": 4, "coosparse": 4, "torch": 5}
    # 13.6 s: 3.1 s left buys rounds 4 and 5 for the three
    assert harness.plan_rounds(costs, 7, 13.6) == {"pydata": 3, "scipy": 5, "coosparse": 5, "torch": 5}
    # a fast coosparse beside a slow peer that spends the whole budget goes on to --repeat
    assert harness.plan_rounds({"coosparse": 0.01, "pydata": 3.0}, 7, 8.0) == {"coosparse": 7, "pydata": 3}
    # the memory floor shares coosparse's priority (every row's x_floor reads it)
    assert harness.plan_rounds({"memory floor": 0.5, "torch": 0.4}, 4, 2.7 + 0.5) == {"memory floor": 4, "torch": 3}
    # with time for all, everybody gets --repeat; without a budget too; never more than --repeat
    assert set(harness.plan_rounds(costs, 7, 100.0).values()) == {7}
    assert set(harness.plan_rounds(costs, 2, None).values()) == {2}
    assert set(harness.plan_rounds(costs, 2, 8.0).values()) == {2}


def test_the_plan_reads_the_first_round_not_the_compiling_probe():
    calls = []

    def compiling():  # the first call compiles: slow once, fast afterwards
        calls.append(1)
        time.sleep(0.3 if len(calls) == 1 else harness.SAMPLE_S)

    times = harness.time_alternating([Impl("coosparse", compiling)], repeat=6, warmup=1, budget=0.2)
    assert len(times["coosparse"]) == 6
