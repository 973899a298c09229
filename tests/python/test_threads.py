"""Kernels called from several Python threads at once: the GIL is released around every kernel,
and each call is correct whatever the other threads run."""
import threading

import numpy as np

import weft
from conftest import assert_call_lets_other_threads_run


def run_in_threads(work, threads=2):
    errors, barrier = [], threading.Barrier(threads)

    def runner(index):
        try:
            barrier.wait()
            work(index)
        except Exception as error:  # reported by the test, not lost in the thread
            errors.append(error)

    pool = [threading.Thread(target=runner, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert errors == []


def test_two_threads_run_brgemm_and_einsum_at_once():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((4, 32, 32)).astype(np.float32), rng.standard_normal((4, 32, 32)).astype(np.float32)
    x, y, z = (rng.standard_normal(shape).astype(np.float32) for shape in [(20, 30), (30, 40), (40, 10)])
    expected_gemm = np.einsum("imk,ikn->mn", a, b)
    expected_chain = x @ y @ z

    def work(index):
        for _ in range(200):
            if index == 0:
                c = weft.tpp.brgemm(a, b, beta=0)
                np.testing.assert_allclose(c, expected_gemm, rtol=1e-4, atol=1e-4)
            else:
                np.testing.assert_allclose(weft.einsum("ij,jk,kl->il", x, y, z), expected_chain, rtol=1e-4, atol=1e-3)

    run_in_threads(work)


def test_two_threads_share_one_einsum_tree():
    rng = np.random.default_rng(8)
    operands = [rng.standard_normal((16, 24)).astype(np.float32), rng.standard_normal((24, 8)).astype(np.float32)]
    expected = operands[0] @ operands[1]

    def work(_):
        for _ in range(300):
            np.testing.assert_allclose(weft.einsum("ij,jk->ik", *operands), expected, rtol=1e-5, atol=1e-5)

    run_in_threads(work)


def test_a_kernel_call_lets_other_python_threads_run():
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((1280, 1280)), rng.standard_normal((1280, 1280))
    threads = weft.get_num_threads()
    weft.set_num_threads(1)  # leaves a core to this thread
    try:
        weft.einsum("ij,jk->ik", a, b)  # the kernels are generated before the measured call
        assert_call_lets_other_threads_run(lambda: weft.einsum("ij,jk->ik", a, b))
    finally:
        weft.set_num_threads(threads)
