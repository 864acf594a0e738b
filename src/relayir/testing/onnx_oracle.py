"""The expected outputs of an ONNX model, for tests: ``onnx.reference`` by default, or
ONNX Runtime where the reference evaluator is wrong or knows only the newest semantics
(old opsets, LRN, grouped ConvTranspose, ...)."""

from __future__ import annotations


def expected_outputs(model, feeds: dict, onnxruntime: bool = False) -> list:
    """Run ``model`` (a ``ModelProto``) on ``feeds`` with the chosen oracle; skips the
    calling test when onnxruntime is asked for but not installed."""
    if onnxruntime:
        import pytest

        rt = pytest.importorskip("onnxruntime")
        session = rt.InferenceSession(model.SerializeToString(),
                                      providers=["CPUExecutionProvider"])
        return session.run(None, feeds)
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, feeds)
