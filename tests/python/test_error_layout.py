"""The layout of Triton's compile errors and of a kernel module's import errors as the
`tritonrt` command prints them: tritonrt's one-line summary first, then Triton's text with its
lines and caret as Triton writes them, or the module's traceback with file and line."""
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "kernels"


@pytest.fixture
def compile_error(cli, tmp_path):

    def compile_error(source, name, signature="*fp32,16", *options):
        environment = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path), TRITONRT_PYTHON=sys.executable)
        result = subprocess.run([str(cli), "compile", f"{source}:{name}", "--target", "cuda:90", "--signature",
                                 signature, *options], capture_output=True, text=True, env=environment, timeout=600)
        assert result.returncode == 1, result.stderr
        # Triton's own warnings come first; tritonrt's message is what follows its prefix.
        text = result.stderr[result.stderr.index("tritonrt: "):]
        return text.rstrip("\n").split("\n")

    return compile_error


def test_caret_stays_under_the_column(compile_error):
    lines = compile_error(KERNELS / "error_layout.py", "undefined_name")
    assert lines[0].startswith("tritonrt: kernel 'undefined_name': compiling for cuda:90: CompilationError: at 3:")
    assert "no_such_name is not defined" in lines[0]
    code = "tl.store(x_ptr + offs,       no_such_name"
    assert "tl.store" not in lines[0], "the summary repeats Triton's source lines"
    holding = [i for i, line in enumerate(lines) if code in line]
    assert len(holding) == 1, lines
    source, caret = lines[holding[0]], lines[holding[0] + 1]
    assert caret.strip() == "^", lines
    assert caret.index("^") == source.index("no_such_name"), "\n".join(lines)


def test_import_error_shows_the_modules_lines(compile_error):
    path = KERNELS / "error_layout_import.py"
    lines = compile_error(path, "kernel")
    assert lines[0].endswith("failed: ZeroDivisionError: division by zero"), lines
    text = "\n".join(lines[1:])
    assert f'File "{path}", line 10, in <module>' in text, text
    assert f'File "{path}", line 7, in _scale' in text, text
    assert "return 1 / 0" in text and "SCALE = _scale()" in text, text
    assert "_tritonrt_bridge" not in text and "<frozen" not in text, text


def test_syntax_error_is_shown_as_python_shows_it(compile_error, tmp_path):
    path = Path(os.path.realpath(tmp_path)) / "broken_syntax.py"
    path.write_text("import triton\n\nx = (1 +\n     2))\n")
    with pytest.raises(SyntaxError) as raised:
        compile(path.read_text(), str(path), "exec")
    python_says = "".join(traceback.format_exception_only(raised.type, raised.value)).rstrip("\n").split("\n")
    lines = compile_error(path, "kernel")
    assert "has a syntax error at" in lines[0] and "broken_syntax.py:4" in lines[0], lines
    assert lines[1:] == python_says
    assert any(line.strip() == "^" for line in python_says), python_says


def test_ptxas_failure_keeps_its_lines_after_the_summary(compile_error):
    # maxnreg 0 passes Triton's checks and fails in ptxas: Triton's text spans several lines.
    lines = compile_error(KERNELS / "hostile" / "fill.py", "fill", "*fp32,100", "--maxnreg", "0")
    assert "PTXASError" in lines[0] and "Positive non-zero value expected for maxnreg" in lines[0], lines
    assert "`ptxas` stderr:" in lines[1:], lines
    assert sum("Positive non-zero value expected for maxnreg" in line for line in lines[1:]) == 1, lines
