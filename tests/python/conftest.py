"""Shared helpers of the weft Python tests: fixed-seed random data and bfloat16 bit conversions
(NumPy has no bfloat16: bf16 values travel as uint16 bit patterns)."""
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
