"""Kernels for the torch adapter's tests."""
import triton
import triton.language as tl


@triton.jit
def arguments_kernel(x_ptr, y_ptr, scale, count, flag, DTYPE: tl.constexpr):
    """One parameter per kind of torch argument: tensor, optional tensor, scalars, dtype."""
    pass


@triton.jit
def copy_tile_kernel(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Copies n floats through tensor descriptors made on the device, which on Hopper need
    global scratch memory: it exercises the scratch allocator."""
    desc_in = tl.make_tensor_descriptor(in_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    desc_out = tl.make_tensor_descriptor(out_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    offset = tl.program_id(0) * BLOCK
    desc_out.store([offset], desc_in.load([offset]))
