"""Renderers: each turns the steps of a view into text, and none of them computes."""
