"""A call's arguments as Python code around a kernel (heuristics, hooks, pruning) is shown
them: values, and stand-ins for tensors and typed addresses that record what is read of them,
so that a heuristic is memoized on exactly that."""

import collections.abc

from _tritonrt_bridge import common


class Reads:
    """What a heuristic or hook read of its arguments: (parameter, facet) pairs in order, or
    that it read them all (iterating the mapping), which nothing can be memoized on; and `why`,
    what it did that no memo can repeat (zeroing a tensor, reading a descriptor's fields)."""

    def __init__(self):
        self.pairs = []
        self.everything = False
        self.why = None
        self.hook = False  # a hook's reads: an address read or a descriptor's kind count differently
        self.watching = False  # descriptors note reads only while a hook runs

    def add(self, name, facet):
        if (name, facet) not in self.pairs:
            self.pairs.append((name, facet))

    def read_all(self, why):
        self.everything = True
        self.unreplayable(why)

    def unreplayable(self, why):
        if self.why is None:
            self.why = why


class Tensor:
    """A pointer argument as Python code around a kernel sees it: a stand-in for the tensor it
    came from (through tritonrt/torch.h) or for a typed address (through the core API). It
    records what is read of it, so that a heuristic is memoized on exactly that."""

    def __init__(self, name, address, dtype, source, shape, strides, device, extent, stream, reads):
        self._name, self._address, self._dtype_name, self._source = name, address, dtype, source
        self._shape, self._strides, self._device, self._extent = shape, strides, device, extent
        self._stream, self._reads = stream, reads

    def _read(self, facet):
        if self._reads is not None:
            self._reads.add(self._name, facet)

    def _known(self, what):
        if self._shape is None:
            raise AttributeError(f"parameter '{self._name}' reached tritonrt as a device address, so its {what} is "
                                 "unknown (pass an at::Tensor through tritonrt/torch.h)")

    @property
    def dtype(self):
        self._read("dtype")
        if self._source == "tensor":
            import torch
            return getattr(torch, common.dtypes[self._dtype_name].torch)
        import triton.language as tl
        return getattr(tl, common.dtypes[self._dtype_name].language)

    def data_ptr(self):
        if self._reads is not None and self._reads.hook:
            # A hook that takes an address does something with the memory (a memset through
            # ctypes, say), which no memo of its block shapes would repeat.
            self._reads.unreplayable(f"reads the address of '{self._name}'")
        self._read("address")
        return self._address

    @property
    def shape(self):
        self._read("shape")
        self._known("shape")
        try:
            import torch
            return torch.Size(self._shape)
        except ImportError:
            return tuple(self._shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    ndim = property(dim)

    def numel(self):
        count = 1
        for extent in self.shape:
            count *= extent
        return count

    def stride(self, dim=None):
        self._read("strides")
        self._known("strides")
        return tuple(self._strides) if dim is None else self._strides[dim]

    def is_contiguous(self):
        expected = 1
        for extent, stride in reversed(list(zip(self.shape, self.stride()))):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True

    def element_size(self):
        self._read("dtype")
        return common.dtypes[self._dtype_name].size

    @property
    def device(self):
        self._read("device")
        try:
            import torch
            return torch.device("cuda", self._device)
        except ImportError:
            return f"cuda:{self._device}"

    is_cuda = True

    def zero_(self):
        """Zeroes the argument's memory on the launch stream, as Tensor.zero_ would."""
        if self._reads is not None:
            self._reads.unreplayable(f"calls zero_() on '{self._name}'")
        if not self._extent:
            raise AttributeError(f"parameter '{self._name}': tritonrt does not know how many bytes it spans (pass an "
                                 "at::Tensor, or tritonrt::DevicePtr with its size)")
        import ctypes
        cuda = ctypes.CDLL("libcuda.so.1")
        status = cuda.cuMemsetD8Async(ctypes.c_uint64(self._address), ctypes.c_ubyte(0), ctypes.c_size_t(self._extent),
                                      ctypes.c_void_p(self._stream))
        if status != 0:
            raise RuntimeError(f"cuMemsetD8Async failed with CUresult {status}")
        return self

    def __getattr__(self, attribute):
        raise AttributeError(f"tritonrt passes parameter '{self._name}' to Python as a stand-in for a tensor, which has "
                             f"no '{attribute}' (it offers dtype, shape, size(), dim(), numel(), stride(), "
                             "is_contiguous(), element_size(), device, data_ptr() and zero_())")

    def __repr__(self):
        return f"<tritonrt {self._source} argument '{self._name}': {self._dtype_name} at {self._address:#x}>"


def descriptor(name, address, dtype, shape, strides, block_shape, padding, stream, reads=None):
    """A tensor descriptor argument as Triton's own class (hooks test isinstance), over a
    stand-in of its base address; built without TensorDescriptor's checks, which tritonrt
    made when the descriptor was. A hook may set its block_shape (run_hook reads it back).
    With `reads`, a subclass that notes a read of its fields while `reads.watching` (but of a
    field the hook set itself first): then the hook's run depends on the descriptor."""
    import dataclasses
    from triton.tools.tensor_descriptor import TensorDescriptor
    desc = object.__new__(_watched_class() if reads is not None else TensorDescriptor)
    if reads is not None:
        object.__setattr__(desc, "_tritonrt_watch", (reads, name, set()))
    for field in dataclasses.fields(TensorDescriptor):  # Triton 3.9 added round_f32_to_tf32
        if field.default is not dataclasses.MISSING:
            object.__setattr__(desc, field.name, field.default)
    base = Tensor(f"{name}.base", address, dtype, "address", None, None, -1, 0, stream, None)
    for field, value in (("base", base), ("shape", list(shape)), ("strides", list(strides)),
                         ("block_shape", list(block_shape)), ("padding", padding)):
        object.__setattr__(desc, field, value)
    return desc


_watched = []


def _watched_class():
    """TensorDescriptor's subclass that notes what a hook reads of it (descriptor())."""
    if not _watched:
        import dataclasses
        from triton.tools.tensor_descriptor import TensorDescriptor
        fields = frozenset(field.name for field in dataclasses.fields(TensorDescriptor))

        class WatchedDescriptor(TensorDescriptor):

            def __getattribute__(self, attribute):
                if attribute in fields:
                    watch = _watch_of(self)
                    if watch is not None and watch[0].watching and attribute not in watch[2]:
                        watch[0].unreplayable(f"reads {watch[1]}.{attribute}")
                return object.__getattribute__(self, attribute)

            def __setattr__(self, attribute, value):
                watch = _watch_of(self)
                if watch is not None and watch[0].watching:
                    watch[2].add(attribute)
                object.__setattr__(self, attribute, value)

        def _watch_of(desc):
            # (reads, name, fields written); None on a copy made by the hook (dataclasses.replace)
            try:
                return object.__getattribute__(desc, "_tritonrt_watch")
            except AttributeError:
                return None

        WatchedDescriptor.__name__ = WatchedDescriptor.__qualname__ = TensorDescriptor.__name__
        _watched.append(WatchedDescriptor)
    return _watched[0]


def is_descriptor(value):
    from triton.tools.tensor_descriptor import TensorDescriptor
    return isinstance(value, TensorDescriptor)


class Arguments(collections.abc.Mapping):
    """The arguments of a call as Triton hands them to heuristics and hooks (a dict from
    parameter name to value), recording which are read. `constants` are values the same for
    every call it is shown (a config's num_warps, say), whose reads are not recorded. For a
    heuristic (not `hook`), reading a descriptor reads all of it; a hook is shown watched
    descriptors, which note what is read of them."""

    def __init__(self, values, reads, constants=None, hook=False):
        self._values, self._reads, self._constants, self._hook = values, reads, constants or {}, hook

    def __getitem__(self, name):
        if name not in self._values and name in self._constants:
            return self._constants[name]
        value = self._values[name]
        if self._reads is None:
            return value
        if isinstance(value, Tensor):
            if self._hook:
                self._reads.add(name, "kind")  # a hook may test what it is (isinstance)
        elif isinstance(value, tuple):
            self._reads.read_all(f"reads tuple argument '{name}'")  # nothing to memoize on
        elif is_descriptor(value):
            if self._hook:
                self._reads.add(name, "kind")  # its fields note their own reads
            else:
                self._reads.read_all(f"reads tensor descriptor '{name}'")
        else:
            self._reads.add(name, "value")
        return value

    def __contains__(self, name):
        if name not in self._values and name in self._constants:
            return True
        if self._reads is not None:
            self._reads.add(name, "present")
        return name in self._values

    def get(self, name, default=None):
        return self[name] if name in self else default

    def __iter__(self):
        if self._reads is not None:
            self._reads.read_all("iterates over its arguments")
        return iter({**self._constants, **self._values})

    def __len__(self):
        if self._reads is not None:
            self._reads.read_all("iterates over its arguments")
        return len({**self._constants, **self._values})

    def copy(self):
        return dict(self.items())


def python_arguments(fn, arguments, stream=0, reads=None, watch=False):
    """{name: value} from the C++ description of a call's arguments: one tuple per parameter
    that has a value, (name, kind, ...). With `watch`, descriptors note what is read of them
    into `reads` (descriptor())."""
    return {entry[0]: _python_value(fn, entry, stream, reads, watch) for entry in arguments}


def _python_value(fn, entry, stream, reads, watch=False):
    import triton.language as tl
    name, kind = entry[0], entry[1]
    if kind == "pointer":
        _, _, address, dtype, source, shape, strides, device, extent = entry
        return Tensor(name, address, dtype, source, shape, strides, device, extent, stream, reads)
    if kind == "descriptor":
        return descriptor(name, *entry[2:], stream, reads if watch else None)
    if kind == "dtype":
        return getattr(tl, entry[2])
    if kind == "default":
        return next(p.default for p in fn.params if p.name == name)
    if kind == "str":
        return entry[2].decode("utf-8", "surrogateescape")
    if kind == "tuple":
        # Reading a tuple reads all of it (Arguments marks that): its tensors track nothing.
        return tuple(_python_value(fn, e, stream, None) for e in entry[2])
    return entry[2]
