"""The engine against PyTorch's scaled_dot_product_attention and nn.MultiheadAttention (fixture made once)."""

import json

import numpy as np
import pytest

from attntrace.core.engine import trace
from attntrace.files.problemfile import from_dict
from tests.conftest import ROOT

CASES = json.loads((ROOT / "tests" / "fixtures" / "torch_reference.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["kind"])
def test_engine_matches_torch(case):
    t = trace(from_dict(case["problem"], "fixture"))
    np.testing.assert_allclose(t.output, case["output"], rtol=1e-9, atol=1e-9)
    for h, weights in zip(t.heads, case["weights"]):
        np.testing.assert_allclose(h.weights, weights, rtol=1e-9, atol=1e-12)


def test_fixture_covers_masks_scales_heads_and_cross_attention():
    kinds = {(c["kind"], c["problem"].get("heads", 1), "source" in c["problem"], tuple(c["problem"].get("mask", [])),
              c["problem"]["scale"]) for c in CASES}
    assert {k[0] for k in kinds} == {"scaled_dot_product_attention", "MultiheadAttention"}
    assert {k[1] for k in kinds} == {1, 2, 3} and {k[3] for k in kinds} >= {(), ("causal",), ("padding",)}
    assert any(k[2] for k in kinds) and {k[4] for k in kinds} == {True, False, 8.0}
