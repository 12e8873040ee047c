"""The four IR levels of mlc (aten, loops, buffer, triton) and the shared `sym` expressions."""
