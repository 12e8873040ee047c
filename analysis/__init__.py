"""Analyses several passes share (MLIR's Analysis/): each question answered in one module."""
