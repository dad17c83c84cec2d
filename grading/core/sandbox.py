"""Run a checker in a forked child with CPU, memory and wall-clock limits.

Symbolic algebra can be driven into very long computations by a crafted answer; the
worker must survive that and grade the next answer. ``run_limited`` forks (``os.fork``,
not multiprocessing, so it also works inside daemonic Celery pool processes), applies
RLIMIT_CPU and RLIMIT_AS in the child, sends the result back through a pipe, and
kills the child when the wall-clock limit passes.

The memory limit is headroom *above what the process already maps* at fork time,
because the address space of a process with NumPy and SymPy loaded is already large.
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import time

from grading.core.grades import Grade, InvalidRequest, could_not_grade


class SandboxError(RuntimeError):
    """The child failed for a reason other than a limit (its exception is in the message)."""


class SandboxLimitExceeded(SandboxError):
    """The child ran out of CPU time, memory or wall-clock time."""


def _mapped_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def _apply_limits(cpu_seconds: float, memory_mb: int, address_space_at_fork: int) -> None:
    cpu = max(1, int(round(cpu_seconds)))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    limit = address_space_at_fork + memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _child(write_end: int, func, args, kwargs, cpu_seconds, memory_mb, address_space_at_fork) -> None:
    try:
        _apply_limits(cpu_seconds, memory_mb, address_space_at_fork)
        payload = pickle.dumps(("ok", func(*args, **kwargs)))
    except MemoryError:
        payload = pickle.dumps(("memory", "the memory limit was exceeded"))
    except BaseException as problem:  # report everything: the parent decides what to raise
        try:
            payload = pickle.dumps(("error", f"{type(problem).__name__}: {problem}"))
        except BaseException:
            payload = pickle.dumps(("error", type(problem).__name__))
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(payload)


def _read_until(read_end: int, deadline: float) -> bytes | None:
    """Everything the child writes, or None when the deadline passes first."""
    chunks = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([read_end], [], [], remaining)
        if not ready:
            return None
        chunk = os.read(read_end, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def run_limited(func, *args, cpu_seconds: float = 2, memory_mb: int = 512, wall_seconds: float = 3, **kwargs):
    """Return ``func(*args, **kwargs)`` computed in a limited child process.

    Raises SandboxLimitExceeded (CPU, memory, wall clock) or SandboxError (the function
    raised, or the child died). The result must be picklable.
    """
    address_space = _mapped_bytes()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into the caller's code
        os.close(read_end)
        try:
            _child(write_end, func, args, kwargs, cpu_seconds, memory_mb, address_space)
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        payload = _read_until(read_end, time.monotonic() + wall_seconds)
    finally:
        os.close(read_end)
    if payload is None:
        _kill(pid)
        raise SandboxLimitExceeded(f"the check took longer than {wall_seconds:g} s and was stopped")
    _, status = os.waitpid(pid, 0)
    return _result(payload, status, cpu_seconds)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


def _result(payload: bytes, status: int, cpu_seconds: float):
    if not payload:
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
            raise SandboxLimitExceeded(f"the check used more than {cpu_seconds:g} s of CPU time and was stopped")
        raise SandboxError(f"the checking process ended without a result (status {status})")
    kind, value = pickle.loads(payload)
    if kind == "ok":
        return value
    if kind == "memory":
        raise SandboxLimitExceeded(value)
    raise SandboxError(value)


def check_isolated(answer_type: str, expected, answer, options: dict | None = None, **limits) -> Grade:
    """``answers.check``, sandboxed for the symbolic types; a limit gives a could-not-grade Grade.

    A bad *request* is re-raised in the parent as InvalidRequest (a ValueError), as ``check`` does.
    """
    from grading.core import answers

    if answer_type not in answers.SANDBOXED_TYPES:
        return answers.check(answer_type, expected, answer, options)
    _warm_parent(answer_type, expected, options)
    try:
        outcome = run_limited(_check_or_request_error, answer_type, expected, answer, options, **limits)
    except SandboxLimitExceeded as limit:
        return could_not_grade(
            f"Your answer could not be checked automatically ({limit}); it has been passed on for review.",
            reason=str(limit),
        )
    if isinstance(outcome, InvalidRequest):
        raise outcome
    return outcome


def _check_or_request_error(answer_type, expected, answer, options):
    """Runs in the child: a bad request comes back as a value, not as a generic SandboxError."""
    from grading.core import answers

    try:
        return answers.check(answer_type, expected, answer, options)
    except ValueError as problem:
        return InvalidRequest(str(problem))


def _warm_parent(answer_type: str, expected, options) -> None:
    """Import the checker and read the expected value before forking, so every child
    inherits them instead of paying for the import and parse itself."""
    from grading.core import answers

    module = answers.checker_module(answer_type)
    if answer_type == "symbolic" and isinstance(options, (dict, type(None))):
        try:
            module.read_expected(expected, options or {})
        except ValueError:
            pass  # the child reports the bad request
