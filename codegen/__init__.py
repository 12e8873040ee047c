"""From the triton dialect to running code: Python emission and the runtime."""
