"""The `tritonrt` console script: runs the command-line program this package holds."""
import os
import sys

from . import cli_path


def main():
    if cli_path is None or not os.path.isfile(cli_path):
        sys.exit(f"tritonrt: this installation has no command-line program ({cli_path or 'not built'})")
    # The program embeds a Python to compile with: the one this script runs in, unless told otherwise.
    os.environ.setdefault("TRITONRT_PYTHON", sys.executable)
    os.execv(cli_path, [cli_path, *sys.argv[1:]])
