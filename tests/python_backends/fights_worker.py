"""Python backends that reach past their own calls; tests/python_backend_test.cpp runs them.

Importing this module changes torch's settings for the whole process; leaves_thread's first call
leaves a thread that ends the process as soon as another backend of the same worker is called;
detaches' first call starts a process of its own session and one it leaves (a double fork).
"""
import os
import subprocess
import threading

import torch

torch.set_num_threads(1)  # at import: every backend of the worker would run on one thread

_another_called = threading.Event()
_thread_left = False


def leaves_thread(q, k, v, causal):
    global _thread_left
    if not _thread_left:
        _thread_left = True
        threading.Thread(target=lambda: (_another_called.wait(), os._exit(5)), daemon=True).start()
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def victim(q, k, v, causal):
    if _thread_left:  # in the worker where leaves_thread ran: its thread ends this process
        _another_called.set()
        threading.Event().wait(60)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def threads_seen(q, k, v):
    raise NotImplementedError(f"torch.get_num_threads() is {torch.get_num_threads()}")


def detaches(q, k, v, causal):
    """Starts, at its first call, three processes that hold the worker's stdout and stderr open for
    ten minutes: one of its own session (setsid), one that a shell of its own session started in
    the background and left (a double fork: its parent is gone while the worker still runs), and
    one whose parent is such a left subshell (ending the subshell hands it on). Writes their pids,
    one a line, where $ATTNBENCH_TEST_PIDFILE says: the run must end all three, not leave them
    holding its output."""
    global _detached
    if not _detached:
        _detached = True
        own_session = subprocess.Popen(["sleep", "600"], start_new_session=True)
        left = subprocess.run(["sh", "-c", "sleep 600 >&2 & echo $!"], stdout=subprocess.PIPE, text=True,
                              check=True, start_new_session=True).stdout.strip()
        # a left subshell that waits on a sleep of its own: ending the subshell hands the sleep on
        nested = subprocess.run(["sh", "-c", "( sleep 600 >&2 & echo $!; exec >&2; wait ) &"],
                                stdout=subprocess.PIPE, text=True, check=True,
                                start_new_session=True).stdout.strip()
        with open(os.environ["ATTNBENCH_TEST_PIDFILE"], "w") as f:
            f.write(f"{own_session.pid}\n{left}\n{nested}\n")
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


_detached = False
