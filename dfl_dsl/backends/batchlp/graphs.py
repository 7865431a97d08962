"""Run a fixed-shape tensor function as one CUDA graph replay.

The batched solver's steps are hundreds of small kernels each; launched one by one from
Python, a step costs the launches (several µs each, and more on a busy host), not the
arithmetic. Captured once in a CUDA graph and replayed, a step is one launch. `Captured`
wraps a function of tensors whose shapes don't change between calls: the first call captures
it on copies of its inputs (after one warm-up call, as torch.cuda.graphs requires), later
calls copy their inputs into those and replay. A function that updates state in place does
so at every call, the warm-up included. On a CPU or with `enabled=False` it is a plain call.

Only functions known to capture are wrapped (the PDHG blocks: products, clamps, reductions).
A capture that fails is an error, not a fallback: on an H200, a failed capture of a batched
Cholesky left later kernels unrun and their outputs uninitialized — the one way this solver
could have returned a wrong answer as certified.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


class Captured:
    def __init__(self, fn: Callable[..., object], enabled: bool = True) -> None:
        self.fn = fn
        self.enabled = enabled and torch.cuda.is_available()
        self.graph: torch.cuda.CUDAGraph | None = None
        self.inputs: tuple[torch.Tensor, ...] = ()
        self.outputs: object = None

    @property
    def captured(self) -> bool:
        return self.graph is not None

    def __call__(self, *inputs: torch.Tensor):
        if not self.enabled or not all(t.is_cuda for t in inputs if isinstance(t, torch.Tensor)):
            return self.fn(*inputs)
        if self.graph is None:
            return self._capture(inputs)
        for static, new in zip(self.inputs, inputs, strict=True):
            static.copy_(new)
        self.graph.replay()
        return self.outputs

    def _capture(self, inputs: tuple[torch.Tensor, ...]):
        self.inputs = tuple(t.clone() for t in inputs)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            result = self.fn(*self.inputs)  # warm-up: lazy allocations settle before capture
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                self.outputs = self.fn(*self.inputs)
        except RuntimeError as exc:
            raise RuntimeError("a CUDA graph capture of the batched LP solver failed; solve "
                               "with Settings(graphs=False)") from exc
        del result
        self.graph = graph
        graph.replay()
        return self.outputs
