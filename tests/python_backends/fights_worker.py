"""Python backends that reach past their own calls; tests/python_backend_test.cpp runs them.

Importing this module changes torch's settings for the whole process; leaves_thread's first call
leaves a thread that ends the process as soon as another backend of the same worker is called.
"""
import os
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
