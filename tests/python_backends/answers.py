"""Python backends whose supports() answers outside its contract (a tensor, truthy as it is) and
inside it (False): tests/python_backend_test.cpp reads what their rows say."""
import torch


def tensor_answer(q, k, v):
    return q


def supports_tensor_answer(problem):
    return torch.ones(1)  # truthy, but no answer supports() may give


def false_answer(q, k, v):
    return q


def supports_false_answer(problem):
    return False
