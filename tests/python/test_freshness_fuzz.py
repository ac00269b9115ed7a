"""A fuzzer for the index's freshness: random kernel packages (helpers in submodules,
constexprs, defaults and autotune configs from other modules, aliases, relative imports,
sibling folders, data files, environment variables), each recorded, edited at random between
processes, and the index's answer compared with Triton's own (the index off), for a bounded
time: TRITONRT_FRESHNESS_FUZZ_SECONDS (default 40), from the seed
TRITONRT_FRESHNESS_FUZZ_SEED (default: the time; printed, so a failure can be replayed)."""
import os
import random
import time

from test_index import NO_PYTHON, SERVED, hash_of, scratch, tritonrt  # noqa: F401 (scratch: a fixture)

SECONDS = float(os.environ.get("TRITONRT_FRESHNESS_FUZZ_SECONDS", "40"))
HEAD = "import triton\nimport triton.language as tl\n"


class Program:
    """One random kernel package and the edits it can take."""

    def __init__(self, rng, root):
        self.rng, self.root = rng, root
        self.package = root / "fz"
        self.sibling = root / "side"
        self.values = {"FACTOR": rng.choice([2, 3]), "VAL": rng.choice([4, 5]), "BLOCK": rng.choice([64, 128]),
                       "DATA": rng.choice([6, 7]), "CONFIGS": rng.choice([1, 2])}
        self.helper_in = rng.choice(["sub", "deep.inner"])  # a submodule, or one two levels down
        self.helper_call = rng.choice(["relative", "dotted", "alias"])
        self.scale_from = rng.choice(["alias", "computed", "data", "environ", "sibling"])
        self.tuned = rng.random() < 0.3
        self.kernel_at = rng.choice(["package", "sibling"])  # the kernel file inside the package or beside it

    def write(self):
        v = self.values
        (self.package / "deep").mkdir(parents=True, exist_ok=True)
        self.sibling.mkdir(exist_ok=True)
        (self.package / "__init__.py").write_text("from . import sub\n")
        (self.package / "deep" / "__init__.py").write_text("")
        helper = HEAD + "from fz.consts import FACTOR\n\n\n@triton.jit\ndef helper(x):\n    return x * FACTOR\n"
        (self.package / "sub.py").write_text(helper if self.helper_in == "sub" else "")
        (self.package / "deep" / "inner.py").write_text(helper if self.helper_in != "sub" else "")
        (self.package / "consts.py").write_text(HEAD + f"FACTOR = tl.constexpr({v['FACTOR']})\nVAL = {v['VAL']}\n")
        configs = ", ".join(f"triton.Config({{'BLOCK': {64 * (i + 1)}}})" for i in range(v["CONFIGS"]))
        (self.package / "cfg.py").write_text(f"import triton\nBLOCK = {v['BLOCK']}\nCONFIGS = [{configs}]\n")
        (self.package / "scale.json").write_text(str(v["DATA"]))
        (self.sibling / "sidevals.py").write_text(f"SIDE = {v['VAL'] + 10}\n")
        self.kernel_file().write_text(self.kernel_text())

    def kernel_file(self):
        return (self.package if self.kernel_at == "package" else self.sibling) / "kern.py"

    def kernel_text(self):
        helper_module = "fz." + self.helper_in
        imports = {
            "relative": f"from fz.{self.helper_in} import helper\n",
            "dotted": f"import {helper_module}\n",
            "alias": f"from fz.{self.helper_in} import helper as scaled_by\n",
        }[self.helper_call]
        call = {"relative": "helper", "dotted": f"{helper_module}.helper", "alias": "scaled_by"}[self.helper_call]
        scale = {
            "alias": "from fz.consts import VAL as SCALE_VALUE\nSCALE = tl.constexpr(SCALE_VALUE)\n",
            "computed": "import fz.consts\nSCALE = tl.constexpr(fz.consts.VAL * 2 + 1)\n",
            "data": "import json, pathlib, fz\n"
                    "SCALE = tl.constexpr(json.loads((pathlib.Path(fz.__file__).parent / 'scale.json').read_text()))\n",
            "environ": "import os\nSCALE = tl.constexpr(int(os.environ.get('FZ_SCALE', '9')))\n",
            "sibling": f"import sys\nsys.path.insert(0, {str(self.sibling)!r})\nfrom sidevals import SIDE\n"
                       "SCALE = tl.constexpr(SIDE)\n",
        }[self.scale_from]
        tune = "@triton.autotune(configs=fz.cfg.CONFIGS, key=['n'])\n" if self.tuned else ""
        default = "" if self.tuned else " = fz.cfg.BLOCK"
        # A kernel beside the package puts the package's folder on sys.path itself.
        reach = "" if self.kernel_at == "package" else f"import sys\nsys.path.insert(0, {str(self.root)!r})\n"
        return (HEAD + reach + "import fz.cfg\n" + imports + scale + "\n\n" + tune + "@triton.jit\n"
                f"def kern(p, n, BLOCK: tl.constexpr{default}):\n    offs = tl.arange(0, BLOCK)\n"
                f"    x = tl.load(p + offs, mask=offs < n)\n"
                f"    tl.store(p + offs, {call}(x) * SCALE, mask=offs < n)\n")

    def edit(self):
        """One random edit; returns the environment the next processes run with, and what it was."""
        choice = self.rng.choice(["FACTOR", "VAL", "BLOCK", "DATA", "CONFIGS", "helper", "environ", "nothing"])
        env = {}
        if choice == "helper":
            path = self.package / ("sub.py" if self.helper_in == "sub" else "deep/inner.py")
            path.write_text(path.read_text().replace("return x * FACTOR", "return x * FACTOR + 1"))
        elif choice == "environ":
            env = {"FZ_SCALE": str(self.rng.choice([9, 11]))}
        elif choice == "BLOCK":  # a power of 2, as tl.arange takes
            self.values["BLOCK"] = self.rng.choice([b for b in (64, 128, 256) if b != self.values["BLOCK"]])
            self.write()
        elif choice == "CONFIGS":
            self.values["CONFIGS"] = self.values["CONFIGS"] % 3 + 1
            self.write()
        elif choice != "nothing":
            self.values[choice] += 1
            self.write()
        return env, choice


def both_ways(cli, root, args, env):
    ours = tritonrt(cli, root, *args, env=env)
    theirs = tritonrt(cli, root, *args, env={**env, "TRITONRT_INDEX": "off"})
    return ours, theirs


def test_the_index_answers_as_triton_does_after_random_edits(cli, tmp_path):
    seed = int(os.environ.get("TRITONRT_FRESHNESS_FUZZ_SEED", time.time_ns() % 2**32))
    print(f"freshness fuzz seed {seed} (TRITONRT_FRESHNESS_FUZZ_SEED replays it)")
    rng = random.Random(seed)
    deadline = time.monotonic() + SECONDS
    programs = recorded = 0
    while time.monotonic() < deadline or programs < 2:
        root = tmp_path / f"program{programs}"
        program = Program(rng, root)
        program.write()
        kernel = f"{program.kernel_file()}:kern"
        args = ("signature", kernel) if program.tuned else \
            ("compile", kernel, "--target", "cuda:90", "--signature", "*fp32,100")
        what = f"seed {seed}, program {programs} ({vars(program)})"
        env = {}
        for step in range(3):
            ours, theirs = both_ways(cli, root, args, env)
            assert ours.returncode == theirs.returncode == 0, f"{what}: {ours.stderr}\n{theirs.stderr}"
            if program.tuned:
                assert ours.stdout == theirs.stdout, f"{what}, step {step}: {ours.stderr}"
            else:
                assert hash_of(ours) == hash_of(theirs), f"{what}, step {step}: {ours.stderr}"
            if step == 0:
                again = tritonrt(cli, root, *args, env={**env, **NO_PYTHON})
                recorded += SERVED in again.stderr
            env, change = program.edit()
            what += f" then {change}"
        programs += 1
    print(f"{programs} programs, {recorded} served from the index before their edits")
    # A fuzzer whose programs are never recorded would check nothing.
    assert recorded >= programs // 2, f"only {recorded} of {programs} programs were recorded (seed {seed})"
