"""Seed 000's model: five linear layers and a gelu (docs/examples/mlp_gelu.mlir)."""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 64)
        self.fc4 = nn.Linear(64, 64)
        self.fc5 = nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc5(self.fc4(self.fc3(self.fc2(self.fc1(x)))))
        return torch.nn.functional.gelu(x)


torch.manual_seed(0)
model = MLP()  # `mlc-import docs/examples/mlp_gelu.py:model --shape 8x32:f32`

