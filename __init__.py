"""mlc: PyTorch Inductor rebuilt as an MLIR-style pass pipeline on xDSL."""
