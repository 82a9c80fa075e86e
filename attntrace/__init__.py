"""Trace transformer self-attention step by step, on real numbers."""

__version__ = "0.1.0"
