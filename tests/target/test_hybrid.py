"""The hybrid model on the emulated boards that list it: flagged thread
tasks (TERN_TASK_THREAD) block while run-to-completion tasks run on the
shared stack, priorities hold across the two kinds, messages to a thread
are neither lost nor duplicated, blocking from a run-to-completion handler
is refused, a thread's stack overflow is caught, and only the flagged tasks
pay for a stack. Scenarios: the top of tests/target/apps/hybrid/hybrid.c.
(With no flagged task hybrid must order like stack: test_ordering.py and
test_apps.py.)"""
from __future__ import annotations

import re

import pytest

from conftest import BOARDS, MODELS, image, run

from terntools.sizes import measure  # noqa: E402  (conftest put tools/ on the path)

HYBRID_BOARDS = sorted(b for b, models in MODELS.items() if "hybrid" in models)
SLEEP = 20000  # B: th's nap, cycles
COUNT = 20  # C: messages per source
# Software interrupt raised in th to the first line of rhi's handler.
# Measured on mps2-an385: 753 instructions (lm3s6965evb 756; from a
# run-to-completion handler, apps/ordering: hybrid 586, stack 550); the
# bound is test_ordering's for the run-to-completion models.
PREEMPT_BOUND = 1000


def lines(out: str, key: str) -> list[str]:
    return [line[2:] for line in out.splitlines() if line.startswith(key + " ")]


@pytest.fixture(scope="module", params=HYBRID_BOARDS)
def hybrid_run(request: pytest.FixtureRequest) -> str:
    r = run(request.param, "hybrid", "hybrid")
    assert r.status == 0, r.out
    assert r.lines[0] == "hybrid: model hybrid"
    return r.out


def test_a_thread_blocks_while_run_to_completion_tasks_run(hybrid_run: str) -> None:
    # th (thread, 3) preempts control (thread, 0) at once and blocks on the
    # semaphore; control posts to rlo (shared stack, 1), which runs at once
    # above control, gives the semaphore and posts to r3 (3) and rhi (5):
    # rhi runs nested at once, th is ready but waits until rlo's handler
    # returns, r3 waits for th (equal priority: the thread goes first); th
    # runs and sleeps, r3 runs, control posts to rlo again; th ends after
    # its nap.
    assert lines(hybrid_run, "B")[0] == (
        "th> th? ctl rlo> rhi> rhi< rlo< th! thz r3> r3< ctl rlo> rlo< th<")
    slept = int(re.search(r"^B slept=(\d+)$", hybrid_run, re.M)[1])
    assert SLEEP <= slept <= SLEEP + 1500


def test_a_higher_run_to_completion_task_preempts_a_thread_at_once(hybrid_run: str) -> None:
    # the interrupt's post to rhi (5) runs rhi before th (3) goes on; th's
    # own post to rhi runs it before the post returns
    assert lines(hybrid_run, "P")[0] == "th> ! rhi> rhi< th+ rhi> rhi< th<"
    latency = int(re.search(r"^P latency=(\d+)$", hybrid_run, re.M)[1])
    assert 0 < latency <= PREEMPT_BOUND


def test_lower_and_equal_messages_wait_for_the_running_thread(hybrid_run: str) -> None:
    # posts to rlo (1) from the interrupt and from th, and to r3 (3, th's own
    # priority) from the interrupt: none preempts th; once th blocks in
    # receive they run above control (0), highest first, rlo's in order
    assert lines(hybrid_run, "N")[0] == "th> ! th+ th< r3> r3< rlo> rlo< rlo> rlo<"


def test_messages_to_a_thread_are_neither_lost_nor_duplicated(hybrid_run: str) -> None:
    assert lines(hybrid_run, "C")[0] == (
        f"isr={COUNT}/{COUNT} rtc={COUNT}/{COUNT} ctl={COUNT}/{COUNT} bad=0,0,0 "
        f"got={3 * COUNT} dropped=0")
    # cnt's naps let its mailbox fill: the counts are not trivially met
    max_queue = int(re.search(r"^C max_queue=(\d+)$", hybrid_run, re.M)[1])
    assert max_queue >= 3


def test_blocking_from_a_run_to_completion_handler_is_refused(hybrid_run: str) -> None:
    # the handler goes on (rlo< follows); giving a semaphore never blocks
    assert lines(hybrid_run, "E") == [
        "rtc sleep=ESTATE take=ESTATE lock=ESTATE yield=ESTATE unlock=EOWNER give=OK",
        "rlo> rlo<",
    ]


def test_a_finalized_thread_task_is_gone(hybrid_run: str) -> None:
    # FINAL ran in cnt's thread, which then ended: posts to it are refused
    # and it never gets the CPU again
    assert lines(hybrid_run, "F") == ["final=OK send=ENOTASK name=? runs=1"]


def test_only_flagged_tasks_run_on_their_own_stacks(hybrid_run: str) -> None:
    assert lines(hybrid_run, "W") == [
        "control=own th=own cnt=own rlo=main r3=main rhi=main feed=main"]
    m = re.search(r"^M main_stack=(\d+) control=(\d+) th=(\d+) cnt=(\d+)$", hybrid_run, re.M)
    assert m, hybrid_run
    # every private stack was used, none beyond its size (1024, 512, 512)
    control, th, cnt = int(m[2]), int(m[3]), int(m[4])
    assert 0 < control < 1024 and 0 < th < 512 and 0 < cnt < 512


@pytest.mark.parametrize("app,guard", [("hybrid-overflow", True),
                                       ("hybrid-overflow-nompu", False)])
@pytest.mark.parametrize("hboard", HYBRID_BOARDS)
def test_a_threads_stack_overflow_is_caught(hboard: str, app: str, guard: bool) -> None:
    r = run(hboard, "hybrid", app)
    assert r.status == 4, r.out
    assert "tern: stack overflow in task 'deep' (id 1): stack 512 bytes" in r.out
    assert ("in the MPU guard" in r.out) == guard
    assert "survived" not in r.out


@pytest.mark.parametrize("hboard", HYBRID_BOARDS)
def test_a_stack_the_pool_cannot_hold_refuses_the_app(hboard: str) -> None:
    # bystander's 1024 bytes are taken; deep's 4096 exceed the 2048-byte pool
    r = run(hboard, "hybrid", "hybrid-stack-too-big")
    assert r.status == 1, r.out
    assert ("tern: no room for the 4096-byte stack of task 'deep' "
            "(1024 of 2048 pool bytes used" in r.out)
    assert "task 'deep': init: INIT could not be posted: TERN_ENOMEM" in r.out
    assert "digging" not in r.out


@pytest.mark.parametrize("hboard", HYBRID_BOARDS)
def test_only_flagged_tasks_pay_for_a_stack(hboard: str) -> None:
    """RAM (data + bss) of the same app: hybrid keeps the stack pool for
    the flagged tasks only, threads one for every task."""
    ram = {model: measure([image(hboard, model, "hello")], BOARDS[hboard])[0].ram
           for model in ("stack", "hybrid", "threads")}
    assert ram["stack"] < ram["hybrid"] < ram["threads"], ram
    # what hybrid adds to stack: its 2048-byte pool (TERN_HYBRID_STACK_POOL),
    # the idle thread's 512-byte stack (TERN_HYBRID_IDLE_STACK), and at most
    # 1024 bytes for the TERN_HYBRID_THREADS (4) thread objects and the
    # thread statistics; not a stack per task (measured 3456 on both boards)
    assert ram["hybrid"] - ram["stack"] <= 2048 + 512 + 1024, ram
