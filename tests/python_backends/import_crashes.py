"""A module whose import takes the interpreter, and its worker, down (a segfault)."""
import ctypes

ctypes.string_at(0)  # reads address 0: SIGSEGV


def attention(q, k, v):
    return q
