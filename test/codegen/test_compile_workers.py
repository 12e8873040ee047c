"""`CompileWorkers`' protocol with stand-in workers (any machine): readiness, answers in order,
and a worker that dies answers what waits instead of leaving a launch waiting. The real
workers compile on a GPU (`test_launch.py`)."""

from __future__ import annotations

import time
from types import SimpleNamespace

from mlc.codegen.compile_workers import CompileWorkers

# A stand-in worker: reads the capability and backend hash, says ready, answers each job with its
# kernel's name, XBLOCK, arguments and TRITON_SALT; `DIE_AT` jobs in, it exits (a crashed compiler).
WORKER = """
import pickle, sys
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
capability, backend_hash = pickle.load(stdin)
assert capability == (9, 0)
if {die_before_ready}:
    sys.exit(1)
pickle.dump("ready", stdout); stdout.flush()
done = 0
while True:
    try:
        path, name, config, args, environment = pickle.load(stdin)
    except EOFError:
        break
    done += 1
    if done == {die_at}:
        sys.exit(1)
    salt = environment.get("TRITON_SALT", "-")
    pickle.dump(f"{{name}} {{config['XBLOCK']}} {{args}} {{salt}}", stdout); stdout.flush()
"""


def _kernel(name: str) -> SimpleNamespace:
    def fn() -> None: ...

    fn.__code__ = fn.__code__.replace(co_name=name)
    return SimpleNamespace(fn=fn)


def _start(count: int, die_at: int = 0, die_before_ready: bool = False) -> CompileWorkers:
    script = WORKER.format(die_at=die_at, die_before_ready=die_before_ready)
    return CompileWorkers.start(count, (9, 0), command=("-c", script))


def _eventually(condition, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_every_job_is_answered_once_workers_are_ready(monkeypatch) -> None:
    """Jobs submitted before the workers are ready are answered in order, each compiled under
    the `TRITON_*` variables of the moment it was submitted (odd jobs: TRITON_SALT set)."""
    workers = _start(2)
    futures = []
    for i in range(6):
        if i % 2:
            monkeypatch.setenv("TRITON_SALT", str(i))
        else:
            monkeypatch.delenv("TRITON_SALT", raising=False)
        futures.append(workers.submit(_kernel(f"k{i}"), dict(XBLOCK=2**i), ("f32", i)))
    expected = [f"k{i} {2**i} ('f32', {i}) {i if i % 2 else '-'}" for i in range(6)]
    assert [f.result(timeout=60) for f in futures] == expected
    assert _eventually(lambda: workers.ready == 2)
    assert not workers.broken


def test_a_worker_that_dies_answers_what_waits() -> None:
    """The only worker dies at its second job: that job and every later one are answered
    (with the reason), the pool is marked broken, and a job submitted afterwards is answered at
    once; none raises."""
    workers = _start(1, die_at=2)
    futures = [workers.submit(_kernel(f"k{i}"), dict(XBLOCK=1), ()) for i in range(4)]
    answers = [f.result(timeout=60) for f in futures]
    assert answers[0] == "k0 1 () -"
    assert answers[1].startswith("compile worker died")
    assert answers[2:] == ["the compile workers stopped"] * 2
    assert workers.broken
    assert workers.submit(_kernel("late"), dict(XBLOCK=1), ()).result(timeout=1) == "the compile workers stopped"


def test_a_worker_that_dies_while_starting_is_never_ready() -> None:
    workers = _start(1, die_before_ready=True)
    assert _eventually(lambda: workers.broken)
    assert workers.ready == 0
