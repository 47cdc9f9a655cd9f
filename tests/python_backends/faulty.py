"""Python backends that fail the ways user code does; tests/python_backend_test.cpp runs them."""
import torch


def raises(q, k, v):
    return _helper(q)


def _helper(q):
    raise ValueError("planted in the call")  # the line the error row must name


def not_a_tensor(q, k, v):
    return 3


def refuses(q, k, v, problem):
    if problem.seq_len == 48:
        raise NotImplementedError("no 48s here")
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=problem.causal)


def checked(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def supports_checked(problem):
    if problem.seq_len == 48:
        raise KeyError("planted in supports")
    return f"only seq_len 48, not {problem.seq_len}"


def surrogate(q, k, v):
    """a docstring with a lone surrogate: \udcff"""
    raise ValueError("a file name the file system gave as bytes: \udcff.bin")


def says_no(q, k, v):
    return q


def supports_says_no(problem):
    return "not on \udcfe"


def out_of_memory(q, k, v):
    return torch.empty(2**62, dtype=torch.uint8)  # the CPU allocator refuses: an oom row


def memory_error(q, k, v):
    raise MemoryError("planted: no room")  # Python's own out-of-memory: an oom row
