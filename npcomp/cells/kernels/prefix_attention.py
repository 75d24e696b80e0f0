"""Attention over every prefix of a chain (Nayebi & Blundell eq. 9): at each
step t, the softmax over steps j <= t of scores e_j weighs the vectors v_j.

The forward is an online softmax in O(T d) per sentence (a running maximum
and sum); the backward reverses it by suffix sums.  The recurrent-attention
LSTM (``npcomp/cells/lstm_recurrent_attention.py``) gives the equations in
full; ``prefix_sums`` is the O(T^2) direct form its term parts read.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .activations import ONE


def prefix_sums(order: np.ndarray, chain_ptr: np.ndarray, score: np.ndarray, g: np.ndarray) -> np.ndarray:
    """(n, 2d): sum over t >= j of alpha_j^t g_t, each alpha_j^t of eq. 9
    formed from the scores, sentence by sentence (O(T^2): for reading one
    tree's parts, not for training)."""
    out = np.zeros_like(g)
    for sentence in range(chain_ptr.shape[0] - 1):
        steps = order[chain_ptr[sentence] : chain_ptr[sentence + 1]]
        e = score[steps]
        for t in range(steps.shape[0]):
            weights = np.exp(e[: t + 1] - e[: t + 1].max())
            out[steps[: t + 1]] += (weights / weights.sum())[:, None] * g[steps[t]]
    return out


@njit(cache=True, nogil=True)
def prefix_attention(order, chain_ptr, v, score, v_tilde, run_max, run_sum):
    """Eq. 9 for every step t of every sentence, in one pass per sentence:
    v~_t = sum_{j<=t} exp(e_j - M_t) v_j / Z_t with the running maximum M_t and
    running sum Z_t, rescaled by exp(M_{t-1} - M_t) when the maximum grows."""
    width = v.shape[1]
    acc = np.empty(width, dtype=v.dtype)
    for sentence in range(chain_ptr.shape[0] - 1):
        first, last = chain_ptr[sentence], chain_ptr[sentence + 1]
        top = score[order[first]]
        total = top * 0
        acc[:] = 0
        for p in range(first, last):
            t = order[p]
            if score[t] > top:  # the maximum grows: rescale S and Z
                scale = math.exp(top - score[t])
                top = score[t]
                total *= scale
                for q in range(width):
                    acc[q] *= scale
            weight = math.exp(score[t] - top)
            total += weight
            run_max[t] = top
            run_sum[t] = total
            for q in range(width):
                acc[q] += weight * v[t, q]
                v_tilde[t, q] = acc[q] / total


@njit(cache=True, nogil=True)
def prefix_attention_backward(order, chain_ptr, v, score, v_tilde, run_max, run_sum, eps_v_tilde, eps_v, delta_a):
    """Reverses eq. 9 by suffix sums from the last step down (docs/cells/lstm_recurrent_attention.md):
    G_j = g_j / Z_j + exp(M_j - M_{j+1}) G_{j+1},  q_j likewise with v~_j . g_j;
    eps_v_j += exp(e_j - M_j) G_j;  delta_a_j = exp(e_j - M_j) (v_j . G_j - q_j)."""
    width = v.shape[1]
    G = np.empty(width, dtype=v.dtype)
    for sentence in range(chain_ptr.shape[0] - 1):
        first, last = chain_ptr[sentence], chain_ptr[sentence + 1]
        G[:] = 0
        q_sum = score[0] * 0
        for p in range(last - 1, first - 1, -1):
            t = order[p]
            if p < last - 1:
                later = order[p + 1]
                if run_max[t] < run_max[later]:
                    scale = math.exp(run_max[t] - run_max[later])
                    q_sum *= scale
                    for q in range(width):
                        G[q] *= scale
            inverse = ONE / run_sum[t]
            attended = score[0] * 0  # v~_t . g_t
            for q in range(width):
                attended += v_tilde[t, q] * eps_v_tilde[t, q]
                G[q] += eps_v_tilde[t, q] * inverse
            q_sum += attended * inverse
            weight = math.exp(score[t] - run_max[t])
            own = score[0] * 0  # v_t . G_t
            for q in range(width):
                eps_v[t, q] += weight * G[q]
                own += v[t, q] * G[q]
            delta_a[t] = weight * (own - q_sum)
