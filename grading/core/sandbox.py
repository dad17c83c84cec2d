"""Run checkers in a small pool of pre-forked checker processes with CPU, memory and wall-clock limits.

Symbolic algebra can be driven into very long computations by a crafted answer; the
worker must survive that and grade the next answer. Forking per check cost more than
the check, so (PrairieLearn's zygote idea) each process keeps a few warm checker
children, forked from it with NumPy, SymPy and the checkers already imported
(``os.fork``, not multiprocessing, so it also works inside daemonic Celery pool
processes). A checker serves one request at a time over a pair of pipes:

- before each check it arms a CPU-time timer (ITIMER_PROF) for the check's allowance,
  whose signal ends it, backed by a soft RLIMIT_CPU (SIGXCPU), and lowers its soft
  RLIMIT_AS to what it maps now plus the memory allowance (an allocation past that is
  a MemoryError); the limits are lifted again to write the reply;
- the caller waits for the reply no longer than the wall-clock limit, then kills it.

A checker is retired (killed, and a fresh one forked in its place) after any limit is hit,
after an interrupted wait, once it has grown by more than ``MAX_GROWTH_MB``, and after
``SANDBOX_CHECKS_PER_PROCESS`` checks, so a pathological answer costs one checker, never
the worker. A function that cannot be pickled runs in a one-off child that inherits it.
"""

from __future__ import annotations

import atexit
import math
import os
import pickle
import resource
import select
import signal
import struct
import threading
import time

from grading.core.grades import Grade, InvalidRequest, could_not_grade

DEFAULT_POOL_SIZE = 2
DEFAULT_CHECKS_PER_PROCESS = 500
MAX_GROWTH_MB = 256
_HEADER = struct.Struct("!Q")
_CPU_SIGNALS = (signal.SIGPROF, signal.SIGXCPU, signal.SIGKILL)
_RESET_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGXCPU", "SIGPROF", "SIGCHLD", "SIGALRM")


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


def _cpu_seconds_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --- the checker process -------------------------------------------------------------


def _serve(requests: int, replies: int, first_job: tuple | None) -> None:
    """The checker's loop: never returns into the caller's code."""
    for name in _RESET_SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    baseline = _mapped_bytes()
    if first_job is not None:
        _write_frame(replies, _execute(*first_job, baseline=baseline)[0])
        return
    while True:
        frame = _read_frame(requests, deadline=None)
        if frame is None:  # the owner closed the pipe or died: nothing more to serve
            return
        try:
            job = pickle.loads(frame)
        except BaseException as problem:
            _write_frame(replies, pickle.dumps(("error", f"unreadable request: {problem}", False)))
            continue
        payload, retire = _execute(*job, baseline=baseline)
        _write_frame(replies, payload)
        if retire:
            return


def _execute(func, args, kwargs, cpu_seconds, memory_mb, *, baseline: int) -> tuple[bytes, bool]:
    """Run one job under the limits; the pickled reply and whether this checker must retire."""
    _, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
    _, memory_hard = resource.getrlimit(resource.RLIMIT_AS)
    kind = "error"
    try:
        # The profiling timer counts this process's CPU time to the millisecond and its
        # signal (default action) ends the process; RLIMIT_CPU, in whole seconds, backs it up.
        signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
        cpu_limit = math.ceil(_cpu_seconds_used() + cpu_seconds) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (_at_most(cpu_limit, cpu_hard), cpu_hard))
        memory_limit = _mapped_bytes() + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (_at_most(memory_limit, memory_hard), memory_hard))
        value = func(*args, **kwargs)
        kind = "ok"
    except MemoryError:
        kind, value = "memory", "the memory limit was exceeded"
    except BaseException as problem:  # report everything: the caller decides what to raise
        value = f"{type(problem).__name__}: {problem}"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        resource.setrlimit(resource.RLIMIT_AS, (memory_hard, memory_hard))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_hard, cpu_hard))
    grown = _mapped_bytes() - baseline > MAX_GROWTH_MB * 1024 * 1024
    retire = kind == "memory" or grown
    try:
        payload = pickle.dumps((kind, value, retire))
    except BaseException as problem:
        payload = pickle.dumps(("error", f"the result could not be sent back: {problem}", retire))
    return payload, retire


def _at_most(limit: int, hard: int) -> int:
    return limit if hard == resource.RLIM_INFINITY else min(limit, hard)


# --- framing ---------------------------------------------------------------------------


def _write_frame(fd: int, payload: bytes) -> None:
    view = memoryview(_HEADER.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    chunks, missing = [], size
    while missing:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(missing, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int, deadline: float | None) -> bytes | None:
    """One frame, None at end of file; TimeoutError when the deadline passes first."""
    header = _read_exactly(fd, _HEADER.size, deadline)
    if header is None:
        return None
    return _read_exactly(fd, _HEADER.unpack(header)[0], deadline)


def _close_inherited_fds(*, keep: tuple[int, ...]) -> None:
    """In a new checker: close every descriptor the owner had open except ours and stdio.

    A long-lived checker must not hold the owner's sockets and pipes (database and broker
    connections, a browser driver's stdin, other checkers' pipes): while it holds a write
    end, the process at the other end never sees end-of-file and waits for ever.
    """
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


# --- the owner's side ------------------------------------------------------------------


class _Checker:
    """One forked checker process and the pipes to it."""

    def __init__(self, first_job: tuple | None = None):
        request_read, self.requests = os.pipe()
        self.replies, reply_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # child
            try:
                _close_inherited_fds(keep=(request_read, reply_write))
                _serve(request_read, reply_write, first_job)
            finally:
                os._exit(0)
        os.close(request_read)
        os.close(reply_write)
        self.checks = 0
        self.exit_status: int | None = None

    def fds(self) -> tuple[int, int]:
        return self.requests, self.replies

    def alive(self) -> bool:
        if self.exit_status is not None:
            return False
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, 0
        if pid:
            self.exit_status = status
            return False
        return True

    def call(self, request: bytes | None, *, wall_seconds: float, cpu_seconds: float):
        """Send a request (None: the first job is already inside) and return the reply's value."""
        if request is not None:
            try:
                _write_frame(self.requests, request)
            except OSError as problem:  # it died while idle
                self.kill()
                raise SandboxError(f"the checking process was not available ({problem})") from None
        self.checks += 1
        try:
            frame = _read_frame(self.replies, time.monotonic() + wall_seconds)
        except TimeoutError:
            self.kill()
            raise SandboxLimitExceeded(
                f"the check took longer than {wall_seconds:g} s and was stopped"
            ) from None
        if frame is None:
            status = self.reap()
            if os.WIFSIGNALED(status) and os.WTERMSIG(status) in _CPU_SIGNALS:
                raise SandboxLimitExceeded(
                    f"the check used more than {cpu_seconds:g} s of CPU time and was stopped"
                )
            raise SandboxError(f"the checking process ended without a result (status {status})")
        kind, value, retire = pickle.loads(frame)
        if retire:
            self.kill()
        if kind == "ok":
            return value
        if kind == "memory":
            raise SandboxLimitExceeded(value)
        raise SandboxError(value)

    def reap(self) -> int:
        if self.exit_status is None:
            try:
                self.exit_status = os.waitpid(self.pid, 0)[1]
            except ChildProcessError:
                self.exit_status = 0
        return self.exit_status

    def kill(self) -> None:
        if self.exit_status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.reap()
        self.close()

    def close(self) -> None:
        for fd in self.fds():
            try:
                os.close(fd)
            except OSError:
                pass
        self.requests = self.replies = -1


class CheckerPool:
    """Up to ``size`` warm checkers for this process; threads share them, one job each."""

    def __init__(self, *, size: int | None = None, checks_per_process: int | None = None):
        self.size = size or int(os.environ.get("SANDBOX_POOL_SIZE", DEFAULT_POOL_SIZE))
        self.checks_per_process = checks_per_process or int(
            os.environ.get("SANDBOX_CHECKS_PER_PROCESS", DEFAULT_CHECKS_PER_PROCESS)
        )
        self._idle: list[_Checker] = []
        self._all: set[_Checker] = set()
        self._available = threading.Condition()

    def call(self, func, *args, cpu_seconds: float, memory_mb: int, wall_seconds: float, **kwargs):
        """``func(*args, **kwargs)`` in a checker of this pool (see ``run_limited``)."""
        job = (func, args, kwargs, cpu_seconds, memory_mb)
        try:
            request = pickle.dumps(job)
        except Exception:  # a lambda or a local function: a one-off child inherits it instead
            checker = _Checker(first_job=job)
            try:
                return checker.call(None, wall_seconds=wall_seconds, cpu_seconds=cpu_seconds)
            finally:
                checker.kill()
        checker = self._acquire()
        try:
            return checker.call(request, wall_seconds=wall_seconds, cpu_seconds=cpu_seconds)
        except SandboxError:
            raise  # a limit (the checker is already killed) or the check's own exception
        except BaseException:
            checker.kill()  # interrupted mid-check (e.g. a task time limit): state unknown
            raise
        finally:
            self._release(checker)

    def warm(self) -> None:
        """Fork one checker now, so the first check does not pay for it."""
        self._release(self._acquire())

    def _acquire(self) -> _Checker:
        with self._available:
            while True:
                while self._idle:
                    checker = self._idle.pop()
                    if checker.alive():
                        return checker
                    self._discard(checker)
                if len(self._all) < self.size:
                    checker = _Checker()
                    self._all.add(checker)
                    return checker
                self._available.wait()

    def _release(self, checker: _Checker) -> None:
        """Back to the idle list while alive and under its check count; else replaced."""
        with self._available:
            if checker.exit_status is None and checker.checks < self.checks_per_process:
                self._idle.append(checker)
            else:
                self._discard(checker)
                if not self._idle and len(self._all) < self.size:
                    # Pre-fork the replacement now rather than inside the next check.
                    replacement = _Checker()
                    self._all.add(replacement)
                    self._idle.append(replacement)
            self._available.notify()

    def _discard(self, checker: _Checker) -> None:
        checker.kill()
        self._all.discard(checker)

    def close(self) -> None:
        with self._available:
            for checker in list(self._all):
                self._discard(checker)
            self._idle.clear()

    def forget_after_fork(self) -> None:
        """In a forked child: these checkers belong to the parent; close only our copies."""
        for checker in self._all:
            checker.close()
        self._all.clear()
        self._idle.clear()


_pool_lock = threading.Lock()
_pool: CheckerPool | None = None


def checker_pool() -> CheckerPool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = CheckerPool()
        return _pool


def _after_fork_in_child() -> None:
    global _pool, _pool_lock
    _pool_lock = threading.Lock()
    if _pool is not None:
        _pool.forget_after_fork()
    _pool = None


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(lambda: _pool is not None and _pool.close())


# --- the public interface --------------------------------------------------------------


def run_limited(func, *args, cpu_seconds: float = 2, memory_mb: int = 512, wall_seconds: float = 3, **kwargs):
    """Return ``func(*args, **kwargs)`` computed in a limited checker process.

    Raises SandboxLimitExceeded (CPU, memory, wall clock) or SandboxError (the function
    raised, or the child died). The result must be picklable.
    """
    return checker_pool().call(
        func, *args, cpu_seconds=cpu_seconds, memory_mb=memory_mb, wall_seconds=wall_seconds, **kwargs
    )


def check_isolated(answer_type: str, expected, answer, options: dict | None = None, **limits) -> Grade:
    """``answers.check``, sandboxed for the symbolic types; a limit gives a could-not-grade Grade.

    A bad *request* is re-raised in the parent as InvalidRequest (a ValueError), as ``check`` does.
    """
    from grading.core import answers

    if answer_type not in answers.SANDBOXED_TYPES:
        return answers.check(answer_type, expected, answer, options)
    _warm_parent(answer_type)
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
    """Runs in the checker: a bad request comes back as a value, not as a generic SandboxError."""
    from grading.core import answers

    try:
        return answers.check(answer_type, expected, answer, options)
    except ValueError as problem:
        return InvalidRequest(str(problem))


def pool_warm(*, before_fork=None) -> None:
    """Import every sandboxed checker and fork one checker now (a worker process starting);
    ``before_fork`` (no arguments) runs between the imports and the fork."""
    from grading.core import answers

    for answer_type in answers.SANDBOXED_TYPES:
        _warm_parent(answer_type)
    if before_fork is not None:
        before_fork()
    checker_pool().warm()


def _warm_parent(answer_type: str) -> None:
    """Import the checker before the first fork, so every checker inherits it warm."""
    from grading.core import answers

    answers.checker_module(answer_type)
