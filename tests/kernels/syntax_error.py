import triton


@triton.jit
def broken(p:
    pass
