"""Shared helpers of the weft Python tests: fixed-seed random data and bfloat16 bit conversions
(NumPy has no bfloat16: bf16 values travel as uint16 bit patterns)."""
import threading
import time

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(20261128)


def bf16_bits(values):
    """float32 values -> uint16 bf16 bit patterns, truncated (tests pick values that are exact)."""
    return (np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def bf16_values(bits):
    """uint16 bf16 bit patterns -> the float32 values they hold (exactly)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def assert_call_lets_other_threads_run(call):
    """Runs call() (a long kernel, already warmed up) on another thread while this one notes the
    time as often as it can. Had the kernel kept the GIL, no note could fall in the middle half of
    the call (the Python around the kernel takes well under a quarter of it); a loaded machine
    delays this thread, not for that long."""
    finished = threading.Event()
    span = []

    def kernel_thread():
        begin = time.perf_counter()
        call()
        span.extend([begin, time.perf_counter()])
        finished.set()

    stamps = []
    thread = threading.Thread(target=kernel_thread)
    thread.start()
    while not finished.is_set():
        stamps.append(time.perf_counter())
    thread.join()
    begin, end = span
    quarter = (end - begin) / 4
    assert end - begin > 0.05  # long enough to tell
    assert sum(begin + quarter < stamp < end - quarter for stamp in stamps) >= 10
