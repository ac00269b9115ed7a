"""The decorators around a kernel at call time: heuristics, an autotuner's pruning and hooks,
and tuning results persisted where Triton's own Autotuner reads them."""

import hashlib
import json
import operator

from _tritonrt_bridge.arguments import Arguments, Reads, is_descriptor, python_arguments
from _tritonrt_bridge.common import as_json
from _tritonrt_bridge.describe import decorator_stacks, encode, kernels
from _tritonrt_bridge.rules import make_target

# What the package offers C++.
__all__ = ["run_heuristic", "prune_configs", "run_hook", "read_tuning", "write_tuning", "remembered_choice",
           "remember_choice"]


def run_heuristic(handle, layer, name, arguments):
    """Heuristic `name` of decorator `layer` on the call's arguments: JSON with its value and
    what it read (null when it read them all)."""
    fn = kernels[handle]
    reads = Reads()
    heuristic = decorator_stacks[handle][layer].values[name]
    value = heuristic(Arguments(python_arguments(fn, arguments, reads=reads), reads))
    memoizable = not reads.everything and reads.why is None
    return as_json({"value": encode(value), "reads": reads.pairs if memoizable else None})


def prune_configs(handle, layer, arguments, given):
    """The indices of the configs decorator `layer` benchmarks for a call, after its pruning
    (`early_config_prune`, `perf_model` and `top_k`, or a subclass's own prune_configs).
    `given` names the parameters passed positionally; the others arrive as keyword arguments."""
    tuner = decorator_stacks[handle][layer]
    values = python_arguments(kernels[handle], arguments)
    tuner.nargs = {name: values[name] for name in given}
    kwargs = {name: value for name, value in values.items() if name not in given}
    try:
        pruned = tuner.prune_configs({**kwargs, "grid": None, "warmup": False})
    finally:
        tuner.nargs = None
    index = {id(config): i for i, config in enumerate(tuner.configs)}
    return [index[id(config)] for config in pruned]


def run_hook(handle, layer, which, arguments, stream, config=-1, reset_only=False, record=False):
    """Calls an autotune hook on the call's arguments: the decorator's "pre_hook" or
    "post_hook", or "config" (the pre_hook of config `config`, shown the config's values and
    options as Triton shows them). Returns JSON: "changes", [param index, block shape] for each
    tensor descriptor whose block_shape the hook changed; where `record`, "reads", what it read
    ([name, facet] pairs, memo keys as a heuristic's), or null with "why" where its run is more
    than block shapes set from what it read (then it runs again on every call)."""
    tuner = decorator_stacks[handle][layer]
    fn = kernels[handle]
    reads = Reads() if record else None
    if reads is not None:
        reads.hook = True
    values = python_arguments(fn, arguments, stream, reads=reads, watch=record)
    given = {}
    nested = []  # (parameter, descriptor, its block shape) for each descriptor inside a tuple
    for name, value in values.items():
        if is_descriptor(value):
            block_shape, others = _descriptor_fields(value)
            given[name] = (list(block_shape), others)
        elif isinstance(value, tuple):
            nested.extend((name, desc, list(_descriptor_fields(desc)[0])) for desc in _descriptors_in(value))
    constants = {}
    if which == "config":
        constants = {name: value for name, value in tuner.configs[config].all_kwargs().items() if name not in values}
    nargs = Arguments(values, reads, constants, hook=True)
    if reads is not None:
        reads.watching = True
    try:
        if which == "config":
            tuner.configs[config].pre_hook(nargs)
        elif which == "pre_hook":
            tuner.pre_hook(nargs, reset_only=reset_only)
        else:
            tuner.post_hook(nargs, exception=None)
    finally:
        if reads is not None:
            reads.watching = False
    for name, desc, block_shape in nested:
        if list(_descriptor_fields(desc)[0]) != block_shape:
            raise TypeError(f"the hook set the block_shape of a tensor descriptor inside tuple '{name}'; tritonrt "
                            "applies a hook's block shapes to descriptor parameters only")
    # The block shapes it set: where recorded, every one it wrote, as it wrote it (a memo serves
    # calls whose descriptors come with other block shapes); else those it changed.
    changed = []
    for name, (block_shape, others) in given.items():
        now, now_others = _descriptor_fields(values[name])
        for field, was in others.items():
            if now_others[field] is not was and now_others[field] != was:
                raise TypeError(f"the hook changed {name}.{field}; tritonrt applies a hook's changes to a "
                                "descriptor's block_shape only")
        try:
            now = [operator.index(size) for size in now]
        except TypeError:
            raise TypeError(f"the hook set the block_shape of '{name}' to {now!r}, which is not a list of integers")
        written = record and "block_shape" in object.__getattribute__(values[name], "_tritonrt_watch")[2]
        if written or now != block_shape:
            changed.append((fn.arg_names.index(name), now))
    memoizable = reads is not None and not reads.everything and reads.why is None
    return as_json({"changes": changed, "reads": reads.pairs if memoizable else None,
                    "why": reads.why if reads is not None else None})


def _descriptors_in(values):
    """The tensor descriptors inside a tuple, at any depth."""
    for value in values:
        if is_descriptor(value):
            yield value
        elif isinstance(value, tuple):
            yield from _descriptors_in(value)


def _descriptor_fields(desc):
    """A descriptor's block shape, and its other fields by name (lists copied), read without
    noting."""
    import dataclasses
    fields = {}
    for field in dataclasses.fields(desc):
        value = object.__getattribute__(desc, field.name)
        fields[field.name] = list(value) if isinstance(value, list) else value
    return fields.pop("block_shape"), fields


def _tuning_file(handle, layer, backend_name, arch, warp_size, key, configs):
    """Triton's cache manager and file name for a tuning result, as Autotuner.check_disk_cache
    forms them: the same key, so that C++ and Python share one file."""
    from triton.compiler.compiler import make_backend
    from triton.runtime.cache import get_cache_manager, triton_key
    from triton._C.libtriton import get_cache_invalidating_env_vars

    tuner = decorator_stacks[handle][layer]
    fn = kernels[handle]
    parts = [triton_key(), make_backend(make_target(backend_name, arch, warp_size)).hash(), fn.cache_key,
             str(sorted(get_cache_invalidating_env_vars().items())), str(key)]
    parts += [str(tuner.configs[i]) for i in configs]
    cache_key = hashlib.sha256("-".join(parts).encode("utf-8")).hexdigest()
    return get_cache_manager(cache_key), f"{fn.__name__[:150]}.autotune.json"


def read_tuning(handle, layer, backend_name, arch, warp_size, key, configs):
    """Timings a persisted tuning result holds for these configs (a list, one per config,
    None where it has none), or None when there is no result."""
    import json as json_module
    from triton.runtime.autotuner import Config
    manager, name = _tuning_file(handle, layer, backend_name, arch, warp_size, _key_tuple(key), configs)
    path = manager.get_file(name)
    if not path:
        return None
    with open(path) as f:
        stored = json_module.load(f)["configs_timings"]
    tuner = decorator_stacks[handle][layer]
    timings = [None] * len(configs)
    for config, timing in stored:
        restored = Config(**config)
        for slot, i in enumerate(configs):
            if timings[slot] is None and tuner.configs[i] == restored:
                timings[slot] = [float(t) for t in timing]
                break
    return timings


def write_tuning(handle, layer, backend_name, arch, warp_size, key, configs, timings):
    """Persists a tuning result where Triton's check_disk_cache reads it, in its format."""
    tuner = decorator_stacks[handle][layer]
    key = _key_tuple(key)
    manager, name = _tuning_file(handle, layer, backend_name, arch, warp_size, key, configs)
    entries = [(tuner.configs[i].__dict__, timing) for i, timing in zip(configs, timings)
               if not tuner.configs[i].pre_hook]
    manager.put(json.dumps({"key": key, "configs_timings": entries}), name, binary=False)


def remembered_choice(handle, layer, key):
    """(index, own_run_tunes): the index of the config decorator `layer`'s own memory holds for
    tuning key `key`, or None; and whether the tuner tunes a key it lacks with its own run,
    keeping its choice where this finds it (FlagGems' LibTuner), so that a call from Python is
    left to that run. The memory is Autotuner.cache (filled by Triton's path in this process,
    or by a subclass's run before it calls Autotuner.run), or LibTuner's database under its own
    key. A config there that is none of the tuner's configs is refused: Triton's path launches
    with it (tritonrt launches only the configs it described)."""
    tuner = decorator_stacks[handle][layer]
    key = _key_tuple(key)
    if _is_libtuner(tuner):
        return _libtuner_choice(tuner, key), True
    memory = getattr(tuner, "cache", None)
    config = memory.get(key) if isinstance(memory, dict) else None
    if config is None:
        return None, False
    for i, candidate in enumerate(tuner.configs):
        if candidate is config:
            return i, False
    found = next((i for i, candidate in enumerate(tuner.configs) if candidate == config), None)
    if found is None:
        raise ValueError(f"its tuner's cache holds, for key {key}, the config {config}, which is none of its configs")
    return found, False


# FlagGems' LibTuner (flag_gems.utils.libentry), by the class defining its run and its key: it
# keeps its choices in its database (tuner.cache, read on every call of its run), under its own
# key: each of Triton's key values through the tuner's strategy function for it, then Triton's
# dtype strings. A key it lacks it tunes with its policy (timings in its benchmark table).
_LIBTUNER = "flag_gems.utils.libentry.LibTuner"


def _is_libtuner(tuner):
    """Whether `tuner` runs and makes its key as LibTuner does, with one strategy function per
    key (otherwise it is taken as Triton's Autotuner, which tritonrt tunes itself)."""
    for name in ("run", "get_key"):
        definer = next((c for c in type(tuner).__mro__ if name in c.__dict__), None)
        if definer is None or f"{definer.__module__}.{definer.__qualname__}" != _LIBTUNER:
            return False
    strategies = getattr(tuner, "strategy", None)
    return isinstance(strategies, (list, tuple)) and len(strategies) == len(tuner.keys) \
        and all(map(callable, strategies))


def _libtuner_choice(tuner, key):
    """The index of the config LibTuner `tuner` holds for Triton's tuning key `key`, or None.
    As its run: a config from the database (which keeps no pre_hook) is the first of its configs
    with the same values and options."""
    count = len(tuner.keys)
    own_key = tuple(strategy(value) for strategy, value in zip(tuner.strategy, key[:count])) + key[count:]
    config = tuner.cache.get(own_key)
    if config is None:
        return None
    wanted = config.all_kwargs()
    found = next((i for i, candidate in enumerate(tuner.configs)
                  if candidate is config or (config.pre_hook is None and candidate.all_kwargs() == wanted)), None)
    if found is None:
        raise ValueError(f"its LibTuner's database holds, for key {own_key}, the config {config}, which is none of "
                         "its configs")
    return found


def remember_choice(handle, layer, key, config, timed):
    """Config `config` kept in decorator `layer`'s own memory for `key`, where Triton's path
    (a later uninstall(), Triton's own launch of the kernel) finds the choice tritonrt made.
    `timed`, where the configs were timed or their timings read from Triton's file: (config
    indices, timings, seconds the timing took or 0), set as Triton's Autotuner.run sets
    configs_timings and bench_time."""
    tuner = decorator_stacks[handle][layer]
    if isinstance(getattr(tuner, "cache", None), dict):
        tuner.cache[_key_tuple(key)] = tuner.configs[config]
    if timed is not None:
        configs, timings, seconds = timed
        tuner.configs_timings = {tuner.configs[i]: list(timing) for i, timing in zip(configs, timings)}
        if seconds:
            tuner.bench_time = seconds


def _key_tuple(key):
    """The C++ description of a tuning key, [(kind, value), ...], as Triton's tuple of values."""
    values = []
    for kind, value in key:
        if kind == "str":
            value = value.decode("utf-8", "surrogateescape")
        values.append(value)
    return tuple(values)
