"""The seed articles' experiments, computed: each returns titled matrices and a finding, and prints nothing."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from attntrace.core.engine import trace
from attntrace.core.problem import Problem
from attntrace.errors import AttntraceError
from attntrace.language import N_, _

NAMES = ("symmetric", "permute", "similarity", "temperature")
ENTROPY_COLUMNS = (N_("no scaling"), N_("scaled"))  # temperature's entropy table: words for a person, English as data


class Matrix(NamedTuple):
    """one matrix to show: its title, kind, row and column labels, values; data_cols: the column labels as data (CSV)
    where the shown ones are words in the reader's language"""

    title: str
    kind: str
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    values: np.ndarray
    data_cols: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Result:
    """the matrices to show and what they show"""

    title: str
    matrices: list[Matrix]
    findings: list[str]


def asymmetry(s: np.ndarray) -> float:
    """||S - S^T|| / ||S|| (Frobenius): 0 for a symmetric matrix; S is first divided by its largest |cell|, so that
    neither norm overflows or underflows"""
    top = float(np.max(np.abs(s))) if s.size else 0.0
    if top == 0.0:
        return 0.0
    with np.errstate(all="ignore"):
        unit = s / top
        return float(np.linalg.norm(unit - unit.T)) / float(np.linalg.norm(unit))


def symmetric(problem: Problem) -> Result:
    """with W_K used for queries too, every head's score matrix is symmetric (seed 000's case for W_Q)"""
    labels = problem.labels
    own, shared = trace(problem), trace(replace(problem, w_q=problem.w_k, b_q=problem.b_k))
    matrices, findings = [], []
    for a, (h, hs) in enumerate(zip(own.heads, shared.heads)):
        head = _("head {n} · ").format(n=a + 1) if len(own.heads) > 1 else ""
        matrices.append(Matrix(_("{head}scores with W_Q: Q K^T").format(head=head), "scores", labels, labels, h.scores))
        matrices.append(Matrix(_("{head}scores with W_K for both: K K^T").format(head=head), "scores", labels, labels,
                               hs.scores))
        findings.append(_("{head}asymmetry ||S - S^T|| / ||S||: with W_Q {own}, with W_K for both {shared}").format(
            head=head, own=f"{asymmetry(h.scores):.4f}", shared=f"{asymmetry(hs.scores):.4f}"))
    if all(asymmetry(h.scores) < 1e-12 for h in own.heads):
        findings.append(_("(this problem's own Q K^T happens to be symmetric too; try samples/two_heads.json)"))
    findings.append(_("with one matrix for queries and keys, score(i, j) = score(j, i): token i cannot attend to j "
                      "differently from how j attends to i; a separate W_Q lifts that"))
    return Result(_("symmetric: why queries need their own W_Q"), matrices, findings)


def permute(problem: Problem, order: list[int] | None = None) -> Result:
    """reordering the inputs reorders the outputs the same way (no position information: seed 002)"""
    n = len(problem.x)
    order = list(reversed(range(n))) if order is None else order
    labels = problem.labels
    permuted = replace(problem, x=problem.x[order], tokens=tuple(labels[i] for i in order))
    out, out_p = trace(problem).output, trace(permuted).output
    with np.errstate(all="ignore"):
        diff = float(np.max(np.abs(out_p - out[order])))
    if not np.isfinite(diff):
        raise AttntraceError(_("experiment permute: the outputs' largest difference overflows a float64: scale the "
                               "inputs down"))
    cols = tuple(str(c + 1) for c in range(out.shape[1]))
    new_labels = tuple(labels[i] for i in order)
    same = _("equal within 1e-9") if diff <= 1e-9 else f"{diff:.6f}"
    findings = [_("order: {order}").format(order=", ".join(new_labels)),
                _("largest |output(permuted X) - permuted output(X)|: {same}").format(same=same)]
    if problem.masks:
        findings.append(_("the masks ({masks}) depend on position, so equality is not expected").format(
            masks=", ".join(problem.masks)))
    else:
        findings.append(_("equal: self-attention alone is permutation-equivariant; it needs position encodings "
                          "to know word order"))
    return Result(_("permute: self-attention is permutation-equivariant"), [
        Matrix(_("output(X)"), "output", labels, cols, out),
        Matrix(_("output(permuted X)"), "output", new_labels, cols, out_p),
        Matrix(_("output(X), rows permuted"), "output", new_labels, cols, out[order]),
    ], findings)


def cosine(a: np.ndarray) -> np.ndarray:
    """[n, d] -> [n, n] cosine similarity between rows, in [-1, 1]; a row is 1 with itself, whatever its size (each
    row is divided by its largest |cell| first, so no norm overflows or underflows); a zero row is similar to nothing"""
    with np.errstate(all="ignore"):
        top = np.max(np.abs(a), axis=1, keepdims=True) if a.shape[1] else np.zeros((len(a), 1))
        shrunk = np.divide(a, top, out=np.zeros_like(a), where=top > 0)  # [n, d], largest |cell| 1 in each nonzero row
        norms = np.linalg.norm(shrunk, axis=1, keepdims=True)
        unit = np.divide(shrunk, norms, out=np.zeros_like(a), where=norms > 0)
        out = np.clip(unit @ unit.T, -1.0, 1.0)
    np.fill_diagonal(out, np.where(norms[:, 0] > 0, 1.0, 0.0))
    return out


def similarity(problem: Problem) -> Result:
    """cosine similarity between the tokens' Q, K, V and output vectors (seed 002)"""
    t = trace(problem)
    labels = problem.labels
    matrices = []
    for name, values in (("Q", np.concatenate([h.q for h in t.heads], axis=1)),
                         ("K", np.concatenate([h.k for h in t.heads], axis=1)),
                         ("V", np.concatenate([h.v for h in t.heads], axis=1)), (_("output"), t.output)):
        keys = problem.key_labels if name in ("K", "V") else labels
        matrices.append(Matrix(_("cos(row i, row j) of {name}").format(name=name), "weights", keys, keys,
                               cosine(values)))
    return Result(_("similarity: cosine similarity of each token's vectors"), matrices,
                  [_("1 = same direction, 0 = orthogonal, -1 = opposite")])


def entropy(weights: np.ndarray) -> np.ndarray:
    """[n, m] -> [n] entropy of each softmax row in nats: higher is flatter"""
    safe = np.where(weights > 0, weights, 1.0)
    return -np.sum(weights * np.log(safe), axis=1)


def temperature(problem: Problem) -> Result:
    """softmax rows with and without sqrt(d_k) scaling: scaling flattens them (seed 001)"""
    unscaled, scaled = trace(replace(problem, scale=False)), trace(replace(problem, scale=True))
    labels, keys = problem.labels, problem.key_labels
    matrices, findings = [], []
    for a, (h0, h1) in enumerate(zip(unscaled.heads, scaled.heads)):
        head = _("head {n} · ").format(n=a + 1) if len(unscaled.heads) > 1 else ""
        matrices.append(Matrix(_("{head}softmax(Q K^T), no scaling").format(head=head), "weights", labels, keys,
                               h0.weights))
        matrices.append(Matrix(f"{head}softmax(Q K^T / sqrt({scaled.dims.d_k}))", "weights", labels, keys, h1.weights))
        ent = np.stack([entropy(h0.weights), entropy(h1.weights)], axis=1)
        matrices.append(Matrix(_("{head}entropy of each row (nats; higher = flatter)").format(head=head), "scores",
                               labels, tuple(map(_, ENTROPY_COLUMNS)), ent, ENTROPY_COLUMNS))
        findings.append(_("{head}mean entropy {unscaled} without scaling, {scaled} with; largest weight {before} -> "
                          "{after}").format(head=head, unscaled=f"{ent[:, 0].mean():.4f}",
                                            scaled=f"{ent[:, 1].mean():.4f}", before=f"{h0.weights.max():.4f}",
                                            after=f"{h1.weights.max():.4f}"))
    findings.append(_("dividing by sqrt(d_k) keeps large dot products from saturating the softmax, "
                      "so gradients do not vanish"))
    return Result(_("temperature: scaling flattens the softmax"), matrices, findings)


def run(name: str, problem: Problem) -> Result:
    """the experiment `name` on problem; every number it shows is finite, or it raises an AttntraceError naming it"""
    with np.errstate(all="ignore"):
        result = {"symmetric": symmetric, "permute": permute, "similarity": similarity,
                  "temperature": temperature}[name](problem)
    for title, _kind, rows, cols, values, _data in result.matrices:
        bad = np.argwhere(~np.isfinite(values))
        if bad.size:
            i, j = (int(c) for c in bad[0])
            raise AttntraceError(_("experiment {name}: {title} [{row}, {column}] is {value}, not a finite number: "
                                   "scale the inputs down").format(name=name, title=title, row=rows[i], column=cols[j],
                                                                   value=values[i, j]))
    return result
