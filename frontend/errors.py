"""The errors of a compile: a graph mlc cannot compile, and a pass of its pipeline that failed."""

from __future__ import annotations


class MlcCompileError(RuntimeError):
    """A graph mlc cannot compile; the message names the graph, the stage and the node or op."""


class MlcPassError(MlcCompileError):
    """A pass of the pipeline failed: `index` is its position, for the crash reproducer."""

    def __init__(self, message: str, index: int, located: bool = True):
        super().__init__(message)
        self.index, self.located = index, located
