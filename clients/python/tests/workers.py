"""What the load tests' worker processes share: THREADS threads taking JOBS jobs from one queue,
each a call that returns whether it succeeded; "ready" printed, a line on stdin awaited, then
one JSON line with what happened (ok, failed, the first errors, when the last job ended). And,
on the test's side, starting such processes and collecting their lines."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Tuple


def run_jobs(jobs: int, threads: int, call: Callable[[], bool]) -> None:
    """In a worker process: runs `jobs` calls on `threads` threads when told to."""
    todo: "queue.Queue[int]" = queue.Queue()
    for i in range(jobs):
        todo.put(i)
    lock = threading.Lock()
    result: Dict[str, Any] = {"ok": 0, "failed": 0, "errors": [], "last_end": 0.0}
    errors: List[str] = result["errors"]

    def work() -> None:
        while True:
            try:
                todo.get_nowait()
            except queue.Empty:
                return
            try:
                ok, err = call(), ""
            except Exception as e:  # every failure is counted and shown
                ok, err = False, repr(e)[:300]
            with lock:
                result["ok" if ok else "failed"] += 1
                if err and len(errors) < 5:
                    errors.append(err)
                result["last_end"] = max(result["last_end"], time.time())

    workers = [threading.Thread(target=work) for _ in range(threads)]
    print("ready", flush=True)
    sys.stdin.readline()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(json.dumps(result), flush=True)


def run_processes(
    commands: List[List[str]], before_go: Callable[[], None], timeout: float = 120
) -> Tuple[float, List[Dict[str, Any]]]:
    """On the test's side: starts one worker process per command, waits until each is ready,
    calls `before_go`, tells them all to go; when they started and what each said."""
    procs: List[subprocess.Popen] = []
    try:
        for cmd in commands:
            procs.append(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        before_go()
        started = time.time()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        results = []
        for p in procs:
            out, _ = p.communicate(timeout=timeout)
            assert p.returncode == 0, out
            results.append(json.loads(out.strip().splitlines()[-1]))
        return started, results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
