"""The bounded worker pool refuses work when full and drains on shutdown."""

from __future__ import annotations

import threading

from nightwatch.adapters.slack.pool import WorkerPool


def test_the_pool_refuses_work_beyond_its_size_and_takes_it_again_when_free() -> None:
    pool = WorkerPool(size=2)
    release = threading.Event()
    started = threading.Barrier(3)

    def job() -> None:
        started.wait()
        release.wait(5)

    try:
        assert pool.try_submit(job)
        assert pool.try_submit(job)
        started.wait(5)
        assert pool.running == 2
        assert pool.try_submit(job) is False
        release.set()
        assert pool.wait_idle(5)
        done = threading.Event()
        assert pool.try_submit(done.set)
        assert done.wait(5)
    finally:
        release.set()
        pool.shutdown(5)


def test_a_failing_job_frees_its_slot() -> None:
    pool = WorkerPool(size=1)

    def boom() -> None:
        raise RuntimeError("job failed")

    try:
        assert pool.try_submit(boom)
        assert pool.wait_idle(5)
        assert pool.running == 0
    finally:
        pool.shutdown(1)


def test_shutdown_lets_running_jobs_finish_within_the_grace_period() -> None:
    pool = WorkerPool(size=2)
    release = threading.Event()
    finished = threading.Event()

    def job() -> None:
        release.wait(5)
        finished.set()

    assert pool.try_submit(job)
    threading.Timer(0.05, release.set).start()
    assert pool.shutdown(5) is True
    assert finished.is_set()
    assert not pool.stopping.is_set()
    assert pool.try_submit(lambda: None) is False


def test_after_the_grace_period_running_jobs_are_asked_to_checkpoint() -> None:
    pool = WorkerPool(size=1)
    saw_stop = threading.Event()

    def checkpointing_job() -> None:
        if pool.stopping.wait(5):
            saw_stop.set()

    assert pool.try_submit(checkpointing_job)
    assert pool.shutdown(0.05, checkpoint_seconds=5) is True
    assert saw_stop.is_set()


def test_shutdown_reports_jobs_that_outlive_the_checkpoint_wait() -> None:
    pool = WorkerPool(size=1)
    release = threading.Event()
    assert pool.try_submit(lambda: release.wait(5) and None)
    try:
        assert pool.shutdown(0.05, checkpoint_seconds=0.05) is False
    finally:
        release.set()
