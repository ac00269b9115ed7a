"""A kernel module that prints when it is imported, as some libraries' modules do."""
import triton
import triton.language as tl

print("noisy.py says hello while it is imported")


@triton.jit
def noisy(p):
    tl.store(p, 1)
