"""Python backends that say what the bridge gave them: tests/python_backend_test.cpp reads their
reasons back against each row's problem, field by field."""
import torch

KINDS = ("attention", "mla")  # every kind's fields reach these backends


def fields(problem):
    """'batch=1;causal=true;...': the problem's attributes as the report writes them."""
    seen = dict(vars(problem))
    seen["dtype"] = seen.pop("dtype_name")  # the torch.dtype is dtype's name, as a torch object
    for derived in ("group_size", "packed", "q_lens", "kv_lens", "window_left", "window_right"):
        seen.pop(derived)  # derived or drawn, not a column
    text = lambda v: ("" if v is None  # another kind's field: an empty cell
                      else str(v).lower() if isinstance(v, bool)
                      # a number as the report writes it: the shortest text that reads back
                      else (str(int(v)) if v.is_integer() else repr(v)) if isinstance(v, float)
                      else str(v))
    return ";".join(f"{k}={text(v)}" for k, v in sorted(seen.items()))


def _sdpa(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                            enable_gqa=True)


def special(q, k, v, causal):
    return _sdpa(q, k, v, causal)


def plain(q, k, v, causal):
    return _sdpa(q, k, v, causal)


def echo(q, k, v, problem):
    raise NotImplementedError("call " + fields(problem))


def supports_special(problem):  # wins over supports() for special
    return "special " + fields(problem)


def supports_echo(problem):
    return True


def supports(problem):  # every function without a supports_<name> of its own
    return "generic " + fields(problem)
