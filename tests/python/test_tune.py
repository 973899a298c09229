"""weft.tune: a short tuning run returns a configuration that the operators run, stores it in the
tuning database (a temporary one, by $WEFT_TUNING_DB), and config="auto" then finds it."""
import json

import numpy as np
import pytest

import weft


@pytest.fixture
def database(monkeypatch, tmp_path):
    path = tmp_path / "tuning.jsonl"
    monkeypatch.setenv("WEFT_TUNING_DB", str(path))
    monkeypatch.setenv("WEFT_SHIPPED_TUNING_DIR", "")  # no shipped records: auto finds ours or none
    return path


def stored_keys(path):
    return [json.loads(line)["key"] for line in path.read_text().splitlines()]


def test_tuned_gemm_is_stored_and_found_by_auto(rng, database, capfd):
    M, N, K = 64, 32, 64
    assert weft.ops.Gemm(M, N, K, config="auto", threads=1).source == "default"
    best = weft.tune.gemm(M, N, K, seconds=1, threads=1)
    assert capfd.readouterr().err == ""  # the progress bar is for terminals; pytest's stderr is none
    assert set(best.config) >= {"loop_string", "bm", "bn", "bk", "kbf", "blocks"}
    assert best.gflops > 0 and best.measured >= 1 and best.database == str(database)
    assert len(stored_keys(database)) == 1
    x, w = rng.standard_normal((N, K)).astype(np.float32), rng.standard_normal((M, K)).astype(np.float32)
    expected = x.astype(np.float64) @ w.T
    explicit = weft.ops.Gemm(M, N, K, config=best, threads=1)
    assert explicit.source == "explicit"
    tuned = weft.ops.Gemm(M, N, K, config="auto", threads=1)
    assert tuned.source == "tuned (exact hit)"
    assert tuned.description.split()[2] == best.config["loop_string"]
    for op in (explicit, tuned):
        np.testing.assert_allclose(op(x, w), expected, rtol=1e-5, atol=1e-4)


def test_tuned_backward_and_convolution_configurations_run(rng, database):
    best = weft.tune.gemm(32, 32, 64, direction="backward_weights", seconds=1, threads=1)
    dy, x = rng.standard_normal((32, 32)).astype(np.float32), rng.standard_normal((32, 64)).astype(np.float32)
    np.testing.assert_allclose(weft.ops.gemm_backward_weights(dy, x, config=best, threads=1), dy.T.astype(np.float64) @ x,
                               rtol=1e-5, atol=1e-4)
    conv = weft.tune.conv2d(1, 8, 6, 6, 8, 3, 3, padding=1, seconds=1, threads=1, caches="warm")
    assert {"loop_string", "bc", "bk"} <= set(conv.config)
    xc, wc = rng.standard_normal((1, 8, 6, 6)).astype(np.float32), rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
    reference = weft.ops.conv2d(xc, wc, padding=1, config="default", threads=1)
    np.testing.assert_allclose(weft.ops.conv2d(xc, wc, padding=1, config=conv, threads=1), reference, rtol=1e-5, atol=1e-4)
    assert len(stored_keys(database)) == 2


def test_tune_errors_name_the_argument(database):
    with pytest.raises(ValueError, match="argument 'direction'"):
        weft.tune.gemm(32, 32, 32, direction="sideways")
    with pytest.raises(ValueError, match="argument 'seconds' must be positive"):
        weft.tune.gemm(32, 32, 32, seconds=0)
    with pytest.raises(TypeError, match="argument 'threads' must be an int, not str"):
        weft.tune.gemm(32, 32, 32, threads="x")
    with pytest.raises(ValueError, match="argument 'caches' is 'warm' or 'cold'"):
        weft.tune.gemm(32, 32, 32, caches="hot")
    with pytest.raises(TypeError, match="argument 'dtype': the convolutions compute in float32 and bfloat16, not float64"):
        weft.tune.conv2d(1, 8, 6, 6, 8, 3, 3, dtype="f64")
    with pytest.raises(ValueError, match="argument 'dtype': 'f16' is none of 'f32', 'bf16', 'f64'"):
        weft.tune.gemm(32, 32, 32, dtype="f16")
    with pytest.raises(ValueError, match=r"argument 'stride' must be an int or a pair of ints, got \(1, 1, 1\)"):
        weft.tune.conv2d(1, 8, 6, 6, 8, 3, 3, stride=(1, 1, 1))
    with pytest.raises(ValueError, match=r"argument 'padding' must be an int or a pair of ints, got \[1\]"):
        weft.tune.conv2d(1, 8, 6, 6, 8, 3, 3, padding=[1])
    with pytest.raises(TypeError, match="argument 'padding' must be an int or a pair of ints, got '1'"):
        weft.tune.conv2d(1, 8, 6, 6, 8, 3, 3, padding="1")
    assert not database.exists()


def test_tuned_float64_gemm_is_stored_apart_and_found_by_auto(rng, database):
    M, N, K = 48, 32, 64
    best = weft.tune.gemm(M, N, K, dtype="f64", seconds=1, threads=1)
    assert [key["dtype"] for key in stored_keys(database)] == ["fp64"]
    tuned = weft.ops.Gemm(M, N, K, dtype="f64", config="auto", threads=1)
    assert tuned.source == "tuned (exact hit)"
    assert weft.ops.Gemm(M, N, K, config="auto", threads=1).source == "default"  # float32 has no record
    x, w = rng.standard_normal((N, K)), rng.standard_normal((M, K))
    np.testing.assert_allclose(tuned(x, w), x @ w.T, rtol=1e-13, atol=1e-13 * K)


def test_a_tile_bound_run_is_stored_apart_and_found_by_its_tiles(rng, database):
    """tiles= tunes the best with one tiling and stores it under a key carrying the tiles: config=
    with those tiles finds it, "auto" does not (the free search's best is another record), and
    another tiling runs untuned with its own tiles."""
    sizes = (1, 16, 6, 6, 32, 3, 3, 1, 1)
    best = weft.tune.conv2d(*sizes[:7], padding=1, direction="backward_data", seconds=1, threads=1, caches="warm",
                            tiles={"bc": 16, "bk": 16})
    assert best.config["bc"] == 16 and best.config["bk"] == 16
    assert best.key.endswith("threads=1 tiles bc=16 bk=16")
    [key] = stored_keys(database)
    assert key["tiles"] == [["bc", 16], ["bk", 16]]
    assert weft.ops.Conv2dBackwardData(*sizes, config="auto", threads=1).source == "default"
    bound = weft.ops.Conv2dBackwardData(*sizes, config={"bc": 16, "bk": 16}, threads=1)
    assert bound.source == "tuned (exact hit)" and "tiles bc=16 bk=16" in bound.description
    assert bound.description.split()[2] == best.config["loop_string"]
    other = weft.ops.Conv2dBackwardData(*sizes, config={"bc": 8, "bk": 16}, threads=1)
    assert other.source == "default" and " bc=8 bk=16 " in other.description
    dy, w = rng.standard_normal((1, 32, 6, 6)).astype(np.float32), rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(bound(dy, w), other(dy, w), rtol=1e-5, atol=1e-4)
    gemm = weft.tune.gemm(64, 32, 64, direction="backward_weights", seconds=1, threads=1, tiles={"bm": 32, "bk": 16})
    assert (gemm.config["bm"], gemm.config["bk"]) == (32, 16) and gemm.key.endswith("tiles bm=32 bk=16")
    assert weft.ops.GemmBackwardWeights(64, 32, 64, config={"bm": 32, "bk": 16}, threads=1).source == "tuned (exact hit)"
    with pytest.raises(ValueError, match="argument 'tiles' must give bc and bk: 'bk' is missing"):
        weft.tune.conv2d(*sizes[:7], padding=1, seconds=1, threads=1, tiles={"bc": 16, "bx": 1})
    with pytest.raises(TypeError, match="argument 'tiles' must be None or a dict giving bm and bk, not list"):
        weft.tune.gemm(64, 32, 64, seconds=1, threads=1, tiles=[32, 16])


def test_a_tuning_run_drops_the_prepared_operators_auto_would_now_choose_otherwise(database):
    """weft.ops keeps prepared operators; one prepared with config="auto" before a record of its
    shape existed would run the old choice. A tuning run clears that cache: "auto" finds the record
    at once."""
    assert weft.ops.Gemm(32, 32, 32, threads=1).source == "default"
    assert weft.ops.Conv2d(1, 8, 6, 6, 8, 3, 3, padding=1, threads=1).source == "default"
    weft.tune.gemm(32, 32, 32, seconds=0.5, threads=1)
    assert weft.ops.Gemm(32, 32, 32, threads=1).source == "tuned (exact hit)"
    weft.tune.conv2d(1, 8, 6, 6, 8, 3, 3, padding=1, seconds=0.5, threads=1, caches="warm")
    assert weft.ops.Conv2d(1, 8, 6, 6, 8, 3, 3, padding=1, threads=1).source == "tuned (exact hit)"
