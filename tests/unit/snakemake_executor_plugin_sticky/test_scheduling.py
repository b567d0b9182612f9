"""The routing policy, event by event, with no sockets or processes."""

import pytest

from snakemake_executor_plugin_sticky._scheduling import (
    Dispatch,
    FailInvocation,
    Phase,
    Requeue,
    StartWorker,
    StickyScheduler,
    StopWorker,
)


def connected(s: StickyScheduler, *worker_ids: str, now: float = 0.0) -> list:
    out = []
    for w in worker_ids:
        out += s.worker_connected(w, now)
    return out


def test_first_invocation_starts_a_worker_lazily_and_runs_there():
    s = StickyScheduler(max_workers=2)
    assert s.submit(1, "llm", 0.0) == [StartWorker("w1")]
    assert connected(s, "w1") == [Dispatch("w1", 1)]


def test_workers_scale_out_with_waiting_invocations_up_to_the_limit():
    s = StickyScheduler(max_workers=2)
    assert s.submit(1, "llm", 0.0) == [StartWorker("w1")]
    assert s.submit(2, "llm", 0.0) == [StartWorker("w2")]
    assert s.submit(3, "llm", 0.0) == []  # at the limit: waits
    assert connected(s, "w2") == [Dispatch("w2", 1)]
    assert connected(s, "w1") == [Dispatch("w1", 2)]


def test_idle_holder_of_the_template_is_preferred():
    s = StickyScheduler(max_workers=2)
    s.submit(1, "a", 0.0)
    s.submit(2, "b", 0.0)
    connected(s, "w1", "w2")
    s.state_built("w1", "a")
    s.state_built("w2", "b")
    s.invocation_done("w1", 1, 1.0)
    s.invocation_done("w2", 2, 1.0)
    assert s.submit(3, "b", 1.0) == [Dispatch("w2", 3)]
    assert s.submit(4, "a", 1.0) == [Dispatch("w1", 4)]


def test_busy_holder_is_waited_for_briefly_before_a_fresh_worker_builds():
    """A worker builds one template (a job's process under --executor local builds only its
    own): after steal_after, the idle holder of another template makes room for a fresh one."""
    s = StickyScheduler(max_workers=2, steal_after=2.0)
    s.submit(1, "a", 0.0)
    s.submit(2, "b", 0.0)
    connected(s, "w1", "w2")
    s.state_built("w1", "a")
    s.state_built("w2", "b")
    s.invocation_done("w2", 2, 0.5)  # w2 idle, holds only b
    assert s.submit(3, "a", 0.5) == []  # w1 (holder of a) is busy: wait
    assert s.tick(1.0) == []
    assert s.tick(2.6) == [
        StopWorker("w2", "making room for a 'a' worker"),
        StartWorker("w3", "a"),
    ]
    assert connected(s, "w3", now=3.0) == [Dispatch("w3", 3)]


def test_a_template_nobody_holds_gets_a_fresh_worker_never_another_templates():
    s = StickyScheduler(max_workers=1)
    s.submit(1, "a", 0.0)
    connected(s, "w1")
    s.state_built("w1", "a")
    s.invocation_done("w1", 1, 1.0)
    assert s.submit(2, "b", 1.0) == [
        StopWorker("w1", "making room for a 'b' worker"),
        StartWorker("w2", "b"),
    ]
    assert connected(s, "w2", now=2.0) == [Dispatch("w2", 2)]


def test_below_the_limit_a_second_template_starts_its_own_worker():
    s = StickyScheduler(max_workers=2)
    s.submit(1, "a", 0.0)
    connected(s, "w1")
    s.state_built("w1", "a")
    s.invocation_done("w1", 1, 1.0)
    assert s.submit(2, "b", 1.0) == [StartWorker("w2", "b")]  # w1 idle, kept warm for a
    assert s.submit(3, "a", 1.0) == [Dispatch("w1", 3)]


def test_at_the_limit_a_worker_of_another_class_holding_the_same_template_makes_room():
    """The same template on cpu and gpu pilots, one pilot at a time: the idle cpu pilot stops
    for the gpu invocation (it was a hang: only workers of other templates were stopped)."""
    s = StickyScheduler(max_workers=1)
    s.submit(1, "a", 0.0, cls="cpu")
    connected(s, "w1")
    s.state_built("w1", "a")
    s.invocation_done("w1", 1, 1.0)
    out = s.submit(2, "a", 1.0, cls="gpu")
    assert out == [StopWorker("w1", "making room for a 'a' worker"), StartWorker("w2", "a", "gpu")]


@pytest.mark.parametrize("seed", range(20))
def test_no_worker_is_ever_sent_a_second_template(seed):
    """Random arrivals of three templates in two worker classes, completions and ticks: every
    dispatch goes to a worker that holds the template or holds nothing yet, and every
    invocation is dispatched in the end (no hang)."""
    import random

    rng = random.Random(seed)
    s = StickyScheduler(max_workers=rng.choice([1, 2, 3]), steal_after=1.0)
    built: dict[str, str] = {}  # worker -> its template
    running: dict[str, int] = {}
    dispatched: set[int] = set()
    next_id, now = 1, 0.0

    def follow(out: list) -> None:
        for ins in out:
            if isinstance(ins, StartWorker):
                follow(s.worker_connected(ins.worker_id, now))
            elif isinstance(ins, Dispatch):
                template = s.invocations[ins.invocation_id].template
                assert built.setdefault(ins.worker_id, template) == template, (ins, built)
                s.state_built(ins.worker_id, template)
                running[ins.worker_id] = ins.invocation_id
                dispatched.add(ins.invocation_id)

    for _ in range(60):
        now += rng.random()
        if rng.random() < 0.5:
            follow(s.submit(next_id, rng.choice("abc"), now, cls=rng.choice(["cpu", "gpu"])))
            next_id += 1
        elif running:
            worker = rng.choice(sorted(running))
            follow(s.invocation_done(worker, running.pop(worker), now))
        else:
            follow(s.tick(now))
    for _ in range(1000):  # every invocation is dispatched in the end (no starvation)
        if not (running or s.queue):
            break
        now += 1.0
        if running:
            worker = sorted(running)[0]
            follow(s.invocation_done(worker, running.pop(worker), now))
        else:
            follow(s.tick(now))
    assert dispatched == set(range(1, next_id))


def test_lost_worker_requeues_its_invocation_first_and_a_replacement_starts():
    s = StickyScheduler(max_workers=1)
    s.submit(1, "a", 0.0)
    s.submit(2, "a", 0.0)
    connected(s, "w1")
    s.state_built("w1", "a")  # the invocation's own code runs when the worker dies
    out = s.worker_lost("w1", 5.0, "killed")
    assert out == [Requeue(1, "w1"), StartWorker("w2")]
    assert connected(s, "w2", now=6.0) == [Dispatch("w2", 1)]  # requeued one goes first
    assert s.invocations[1].requeues == 1


def test_a_capped_templates_lost_worker_is_replaced_when_workers_connected_crosswise():
    """Two templates capped at one worker each (SHADHO's classes): the worker started for
    "a" connects last and builds "b", the one started for "b" builds "a". When the worker
    holding "b" is lost, its requeued invocation gets a fresh worker; it does not wait for
    the live worker, which was started for "b" but holds "a"."""
    s = StickyScheduler(max_workers=2, max_per_template={"a": 1, "b": 1})
    assert s.submit(1, "a", 0.0) == [StartWorker("w1")]
    assert s.submit(2, "b", 0.0) == [StartWorker("w2")]
    assert connected(s, "w2") == [Dispatch("w2", 1)]  # started for b, builds a
    assert connected(s, "w1") == [Dispatch("w1", 2)]  # started for a, builds b
    s.state_built("w2", "a")
    s.state_built("w1", "b")
    assert s.invocation_done("w2", 1, 1.0) == []
    assert s.worker_lost("w1", 2.0, "killed") == [Requeue(2, "w1"), StartWorker("w3")]
    assert connected(s, "w3", now=3.0) == [Dispatch("w3", 2)]


def test_invocation_fails_after_too_many_lost_workers():
    s = StickyScheduler(max_workers=1, max_requeues=1)
    s.submit(1, "a", 0.0)
    connected(s, "w1")
    s.state_built("w1", "a")
    assert s.worker_lost("w1", 1.0, "oom")[0] == Requeue(1, "w1")
    connected(s, "w2")
    s.state_built("w2", "a")
    out = s.worker_lost("w2", 2.0, "oom")
    assert isinstance(out[0], FailInvocation) and "lost its sticky worker 2 times" in out[0].reason


def test_a_worker_lost_while_building_does_not_use_up_the_invocations_requeues():
    """Why: the Slurm benchmark's fault run scancelled pilots while they loaded MiniLM; each
    loss was charged to the invocation the pilot had been sent, which failed after 4 such
    pilots without its own code ever running."""
    s = StickyScheduler(max_workers=1, max_requeues=0, max_start_failures=4)
    s.submit(1, "a", 0.0)
    for n in range(1, 4):  # three pilots preempted during the build
        connected(s, f"w{n}", now=float(n))
        assert s.worker_lost(f"w{n}", n + 0.5, "SIGTERM") == [
            Requeue(1, f"w{n}"),
            StartWorker(f"w{n + 1}"),
        ]
    assert s.invocations[1].requeues == 0
    assert connected(s, "w4", now=5.0) == [Dispatch("w4", 1)]
    s.state_built("w4", "a")
    assert s.invocation_done("w4", 1, 6.0) == []


def test_repeated_losses_while_building_fail_the_template_and_its_queue():
    s = StickyScheduler(max_workers=1, max_requeues=5, max_start_failures=2)
    s.submit(1, "a", 0.0)
    s.submit(2, "a", 0.0)
    s.submit(3, "b", 0.0)
    connected(s, "w1")
    assert s.worker_lost("w1", 1.0, "segfault")[0] == Requeue(1, "w1")
    connected(s, "w2")
    out = s.worker_lost("w2", 2.0, "segfault")
    msg = "sticky workers were lost 2 times in a row while building template 'a' (last: segfault)"
    assert out[:2] == [FailInvocation(1, msg), FailInvocation(2, msg)]
    assert list(s.queue) == [3]  # template b is unaffected
    assert s.submit(4, "a", 3.0) == [FailInvocation(4, msg)]


def test_a_successful_build_resets_the_count_of_losses_while_building():
    s = StickyScheduler(max_workers=2, max_start_failures=2)
    s.submit(1, "a", 0.0)
    s.submit(2, "a", 0.0)
    connected(s, "w1", "w2")
    assert s.worker_lost("w1", 1.0, "preempted") == [Requeue(1, "w1"), StartWorker("w3")]
    s.state_built("w2", "a")  # another worker of the class built it: the template is fine
    assert connected(s, "w3", now=2.0) == [Dispatch("w3", 1)]  # w2 still runs invocation 2
    assert s.worker_lost("w3", 3.0, "preempted")[0] == Requeue(1, "w3")  # loss 1, not 2
    assert 1 in s.invocations and s.invocations[1].requeues == 0


def test_failed_template_fails_later_invocations_on_arrival():
    s = StickyScheduler(max_workers=1)
    s.submit(1, "a", 0.0)
    s.submit(2, "b", 0.0)
    connected(s, "w1")
    assert s.invocation_done("w1", 1, 1.0) == [Dispatch("w1", 2)]
    assert s.template_failed("a", "broken", 1.0) == []  # nothing of "a" was waiting
    assert s.submit(3, "a", 1.0) == [FailInvocation(3, "broken")]
    assert s.submit(4, "b", 1.0) == []  # other templates are unaffected: waits for w1


def test_failed_template_fails_the_queue():
    s = StickyScheduler(max_workers=1)
    s.submit(1, "a", 0.0)
    s.submit(2, "a", 0.0)
    s.submit(3, "b", 0.0)
    connected(s, "w1")
    out = s.template_failed("a", "broken", 0.5)
    assert out == [FailInvocation(2, "broken")]
    assert list(s.queue) == [3]


def test_workers_that_never_start_fail_the_queue_after_repeated_tries():
    s = StickyScheduler(max_workers=1, max_start_failures=2)
    s.submit(1, "a", 0.0)
    assert s.worker_lost("w1", 1.0, "exit 1") == [StartWorker("w2")]
    out = s.worker_lost("w2", 2.0, "exit 1")
    assert out == [FailInvocation(1, "sticky workers failed to start 2 times (exit 1)")]


def test_idle_workers_stop_after_the_timeout_only_when_nothing_waits():
    s = StickyScheduler(max_workers=1, idle_timeout=10.0)
    s.submit(1, "a", 0.0)
    connected(s, "w1")
    s.invocation_done("w1", 1, 1.0)
    assert s.tick(5.0) == []
    assert s.tick(11.0) == [StopWorker("w1", "idle for 10 s")]
    assert s.workers["w1"].phase is Phase.STOPPING
    # A stopping worker no longer counts: new work starts a fresh one.
    assert s.submit(2, "a", 12.0) == [StartWorker("w2")]


def test_stop_all_stops_each_worker_once():
    s = StickyScheduler(max_workers=2)
    s.submit(1, "a", 0.0)
    s.submit(2, "a", 0.0)
    assert s.stop_all("end") == [StopWorker("w1", "end"), StopWorker("w2", "end")]
    assert s.stop_all("end") == []


def test_max_workers_must_be_positive():
    with pytest.raises(ValueError, match="max_workers"):
        StickyScheduler(max_workers=0)


def by_prefix(template: str) -> str:
    """Pilot classes for the tests: 'gpu-*' templates need gpu pilots, the rest cpu ones."""
    return "gpu" if template.startswith("gpu") else "cpu"


def test_workers_only_take_invocations_of_their_class():
    s = StickyScheduler(max_workers=2, class_of=by_prefix)
    assert s.submit(1, "cpu-a", 0.0) == [StartWorker("w1")]
    out = s.submit(2, "gpu-b", 0.0)
    assert out == [StartWorker("w2")] and out[0].template == "gpu-b"
    assert s.workers["w2"].cls == "gpu"
    # w1 (cpu) connects first but must not take the gpu invocation.
    assert connected(s, "w1") == [Dispatch("w1", 1)]
    s.invocation_done("w1", 1, 1.0)
    assert s.submit(3, "gpu-b", 1.0) == []  # waits for the gpu pilot, w1 idles
    assert connected(s, "w2", now=2.0) == [Dispatch("w2", 2)]


def test_an_idle_worker_of_another_class_makes_room_at_the_limit():
    s = StickyScheduler(max_workers=1, class_of=by_prefix)
    s.submit(1, "cpu-a", 0.0)
    connected(s, "w1")
    s.invocation_done("w1", 1, 1.0)
    out = s.submit(2, "gpu-b", 1.0)
    assert out == [StopWorker("w1", "making room for a 'gpu-b' worker"), StartWorker("w2")]
    assert s.workers["w2"].cls == "gpu"


def test_a_busy_worker_of_another_class_is_not_stopped():
    s = StickyScheduler(max_workers=1, class_of=by_prefix)
    s.submit(1, "cpu-a", 0.0)
    connected(s, "w1")
    assert s.submit(2, "gpu-b", 0.5) == []
    assert s.invocation_done("w1", 1, 1.0) == [
        StopWorker("w1", "making room for a 'gpu-b' worker"),
        StartWorker("w2"),
    ]


def test_a_class_that_cannot_start_fails_alone():
    """Three failed gpu pilot starts fail the gpu work, now and later; cpu work goes on."""
    s = StickyScheduler(max_workers=2, class_of=by_prefix, max_start_failures=3)
    s.submit(1, "cpu-a", 0.0)
    s.submit(2, "gpu-b", 0.0)  # w1 cpu, w2 gpu
    connected(s, "w1")
    assert s.worker_lost("w2", 1.0, "invalid partition") == [StartWorker("w3")]
    assert s.worker_lost("w3", 2.0, "invalid partition") == [StartWorker("w4")]
    out = s.worker_lost("w4", 3.0, "invalid partition")
    assert out == [FailInvocation(2, "sticky workers failed to start 3 times (invalid partition)")]
    assert s.submit(3, "gpu-b", 4.0)[0] == FailInvocation(
        3, "sticky workers failed to start 3 times (invalid partition)"
    )
    assert s.workers["w1"].current == 1  # the cpu worker is untouched
    assert s.submit(4, "cpu-a", 4.0) == [StartWorker("w5")]  # cpu work scales out as usual


def test_a_retired_worker_takes_no_more_work_and_a_fresh_one_starts_after_it_ended():
    """An invocation changed its worker's process (direct mode) or its template's files; the
    worker is stopped, and the waiting invocation runs on a fresh worker (built from the
    template), not on it; that worker starts once the retired one's process has ended (its
    template's teardown and exit handlers), as a fresh job starts after the last one's."""
    s = StickyScheduler(max_workers=1)
    assert s.submit(1, "llm", 0.0) == [StartWorker("w1")]
    assert s.submit(2, "llm", 0.0) == []
    assert connected(s, "w1") == [Dispatch("w1", 1)]
    s.state_built("w1", "llm")
    out = s.invocation_done("w1", 1, 1.0, retire="numpy print options")
    assert out == [StopWorker("w1", "retired: numpy print options")]
    assert s.workers["w1"].phase is Phase.STOPPING
    assert s.worker_lost("w1", 1.5, "stopped") == []  # its link closed: it may still be ending
    # A stopping worker does not count against the limit: its replacement starts at once.
    assert s.worker_exited("w1", 1.7) == [StartWorker("w2", "llm")]
    assert s.worker_exited("w1", 1.8) == []
    assert connected(s, "w2", now=2.0) == [Dispatch("w2", 2)]


def test_a_job_whose_templates_files_changed_since_the_last_runs_on_a_fresh_worker():
    """What the template's build read changed after the worker's last job (another rule's
    job rewrote it: red team 25i's active_learning_template_reader): the worker does not run
    the job; it is stopped, and the job is requeued, first in line, for a fresh worker whose
    build reads the file as it is now."""
    s = StickyScheduler(max_workers=1)
    s.submit(1, "tagger", 0.0)
    connected(s, "w1")
    s.state_built("w1", "tagger")
    assert s.invocation_done("w1", 1, 1.0) == []
    assert s.submit(2, "tagger", 2.0) == [Dispatch("w1", 2)]
    out = s.invocation_lost("w1", 2, 2.1, "labels.tsv changed", retire="labels.tsv changed")
    assert out == [StopWorker("w1", "retired: labels.tsv changed"), Requeue(2, "w1")]
    assert s.workers["w1"].phase is Phase.STOPPING
    assert s.invocations[2].requeues == 0  # not run, not lost: not counted
    assert s.worker_exited("w1", 2.5) == [StartWorker("w2", "tagger")]
    assert connected(s, "w2", now=3.0) == [Dispatch("w2", 2)]


def llm_retired(max_workers: int) -> StickyScheduler:
    """A scheduler whose worker w1 of "llm" was retired after its job, with a second "llm"
    invocation waiting for w1's process to end."""
    s = StickyScheduler(max_workers=max_workers)
    s.submit(1, "llm", 0.0)
    connected(s, "w1")
    s.state_built("w1", "llm")
    assert s.invocation_done("w1", 1, 1.0, retire="its files") == [
        StopWorker("w1", "retired: its files")
    ]
    assert s.submit(2, "llm", 1.1) == []  # waits for w1's process to end
    return s


def test_a_retired_worker_holds_back_only_its_own_templates():
    s = llm_retired(max_workers=2)
    assert s.submit(3, "tok", 1.2) == [StartWorker("w2", "tok")]  # another template: at once
    assert s.worker_exited("w1", 1.3) == [StartWorker("w3", "llm")]


def test_an_empty_worker_does_not_build_a_retiring_workers_template():
    """A fresh worker started for another template connects while a retired worker of
    "llm" still tears down: it must not take (and build) "llm" before that process ended
    (red team 25g's slow_teardown_holds_lock, flaky in CI's order of connections)."""
    s = llm_retired(max_workers=3)
    assert s.submit(3, "tok", 1.2) == [StartWorker("w2", "tok")]
    assert connected(s, "w2", now=1.3) == [Dispatch("w2", 3)]  # not llm's invocation 2
    assert s.worker_exited("w1", 1.4) == [StartWorker("w3", "llm")]


def test_an_invocation_that_changed_nothing_keeps_its_worker():
    s = StickyScheduler(max_workers=1)
    s.submit(1, "llm", 0.0)
    s.submit(2, "llm", 0.0)
    connected(s, "w1")
    assert s.invocation_done("w1", 1, 1.0) == [Dispatch("w1", 2)]


def test_a_fork_child_killed_from_outside_is_requeued_and_its_worker_stays():
    s = StickyScheduler(max_workers=1, max_requeues=1)
    s.submit(1, "llm", 0.0)
    connected(s, "w1")
    s.state_built("w1", "llm")
    assert s.invocation_lost("w1", 1, 1.0, "killed by SIGKILL") == [
        Requeue(1, "w1"),
        Dispatch("w1", 1),
    ]
    assert s.invocation_lost("w1", 1, 2.0, "killed by SIGKILL") == [
        FailInvocation(1, "lost its sticky worker 2 times (last: killed by SIGKILL)")
    ]
    assert s.workers["w1"].phase is Phase.IDLE
