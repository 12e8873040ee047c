"""Seed 001: sum over rows, then sigmoid (`mlc-import docs/examples/sum_sigmoid.py:f --shape 3x9:f32 --shape 3x9:f32`)."""
import torch
def f(x, y):
    return torch.sigmoid(torch.sum(x + y, 1))
