"""The demo's model (`make demo`): a transformer's MLP block, whose residual add and LayerNorm fuse.

`mlc-import docs/examples/mlp_block.py:model --shape 8x32:f32` prints docs/examples/mlp_block.mlir.
"""

import torch
import torch.nn.functional as F
from torch import nn


class MlpBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 32)
        self.norm = nn.LayerNorm(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x + self.fc2(F.gelu(self.fc1(x))))


torch.manual_seed(0)
model = MlpBlock()
