"""Entropy (KL) calibration: the clipping threshold of an activation's histogram."""

import numpy as np

from relayir.quantize.calibrate import entropy_threshold


def test_rare_outliers_are_clipped():
    x = np.random.default_rng(0).standard_normal(100_000)
    x[:5] = 60.0  # five outliers stretch min/max 15x
    t = entropy_threshold(x)
    assert 3.0 < t < 6.0, t  # about 4 sigma, as TensorRT's calibrator finds


def test_a_narrow_histogram_keeps_its_range():
    x = np.random.default_rng(1).uniform(-1, 1, 50_000)
    assert 0.9 < entropy_threshold(x) <= 1.0


def test_degenerate_inputs():
    assert entropy_threshold(np.zeros(10)) == 0.0
    assert entropy_threshold(np.array([2.0, -2.0, np.nan, np.inf])) == 2.0
