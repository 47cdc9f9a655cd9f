"""PyTorch's scaled_dot_product_attention, called from Python.

Beside the C++ `cudnn` plugin (the same SDPA kernel on the H200, chosen by the same dispatcher)
its rows show what a Python call adds per call: the interpreter, the argument parsing of
torch.nn.functional, the tensor wrappers.
"""
import torch.nn.functional as F


def attention(q, k, v, causal, scale, mask):
    """scaled_dot_product_attention from Python (PyTorch's dispatcher picks the kernel)"""
    gqa = q.size(1) != k.size(1)
    if causal and q.size(2) != k.size(2):
        # is_causal aligns the mask top-left; attnbench's is bottom-right (a query block at the
        # end of a longer cache): give it the mask itself (True = masked out).
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask.logical_not(), scale=scale,
                                              enable_gqa=gqa)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=gqa)


def supports(problem):
    if problem.dtype_name == "fp8_e4m3":
        return "scaled_dot_product_attention takes no fp8 inputs"
    return True
