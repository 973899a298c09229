"""weft.explain and weft.trace: the nest of a loop_string as text, and who visits which indices."""
import itertools

import pytest

import weft

GEMM_SPECS = [(0, 4, 1), (0, 8, 1, [4, 2]), (0, 4, 1, [2])]


def test_explain_renders_the_nest_with_its_parallel_loops():
    text = weft.explain("bcaBCb", GEMM_SPECS)
    assert 'loop_string "bcaBCb": 3 loops, 6 levels' in text
    assert "#pragma omp for collapse(2)" in text
    assert "body(a0, b2, c1);" in text


def test_block_sizes_as_a_list_or_as_further_ints_are_the_same_specs():
    as_ints = [(0, 4, 1), (0, 8, 1, 4, 2), (0, 4, 1, 2)]
    assert weft.explain("bcaBCb", as_ints) == weft.explain("bcaBCb", GEMM_SPECS)


def test_a_malformed_loop_string_raises_value_error_with_the_caret():
    with pytest.raises(ValueError) as error:
        weft.explain("bcaBXb", GEMM_SPECS)
    lines = str(error.value).splitlines()
    assert "letter 'X'" in lines[0]
    assert lines[1].strip() == "bcaBXb"
    assert lines[2].index("^") == lines[1].index("X")


def test_specs_that_do_not_fit_the_string_raise_value_error_naming_the_loop():
    with pytest.raises(ValueError, match="LoopSpecs\\[1\\] \\(loop 'b'\\)"):
        weft.explain("bcaBCb", [(0, 4, 1), (0, 8, 1, [4]), (0, 4, 1, [2])])


@pytest.mark.parametrize("specs, error", [
    ("abc", TypeError), ([(0, 4)], ValueError), ([(0, 4, 1.5)], TypeError), ([], ValueError), ([7], TypeError)])
def test_malformed_specs_raise_naming_them(specs, error):
    with pytest.raises(error, match="specs"):
        weft.explain("a", specs)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_trace_visits_every_index_once_over_all_threads(threads):
    specs = [(0, 3, 1), (0, 10, 2, [4])]
    visits = weft.trace("aBb", specs, threads=threads)
    assert len(visits) == threads
    every = sorted(itertools.chain.from_iterable(visits))
    assert every == [(a, b) for a in range(3) for b in range(0, 10, 2)]


def test_trace_shares_the_parallel_loop_between_the_threads():
    visits = weft.trace("aB", [(0, 2, 1), (0, 4, 1)], threads=2)
    assert visits == [[(0, 0), (0, 1), (1, 0), (1, 1)], [(0, 2), (0, 3), (1, 2), (1, 3)]]


def test_trace_of_a_sequential_nest_runs_in_order_on_thread_zero():
    visits = weft.trace("ba", [(0, 2, 1), (0, 3, 1)], threads=2)
    assert visits[0] == [(a, b) for b in range(3) for a in range(2)]
    assert visits[1] == []


@pytest.mark.parametrize("threads, error", [(0, ValueError), (-2, ValueError), ("2", TypeError)])
def test_trace_rejects_bad_thread_counts(threads, error):
    with pytest.raises(error, match="threads"):
        weft.trace("a", [(0, 4, 1)], threads=threads)
