// Finding the Python that tritonrt embeds in a process that has none: candidates in a fixed
// order, each asked about itself by running it (with a time limit and bounded output).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace tritonrt::detail {

/// Where libtritonrt itself was loaded from, if the loader can say.
std::optional<std::filesystem::path> library_path();

/// The Python tritonrt embeds in a process that has none, found at run time: the first of
/// TRITONRT_PYTHON (taken or refused, never passed over; a name without a slash is looked
/// up on PATH), $VIRTUAL_ENV/bin/python3, $CONDA_PREFIX/bin/python3, the Python of the
/// environment tritonrt is installed in, python3 on PATH and the Python tritonrt was built
/// with that answers within TRITONRT_PYTHON_TIMEOUT seconds (default 30), is the minor
/// version the compiler module was built for, has a shared libpython and can import triton.
/// `library` is its libpython (TRITONRT_LIBPYTHON overrides it). Found once per process;
/// throws PythonError naming each candidate tried and why it was passed over.
struct EmbeddedPython {
  std::string program, library;
};
const EmbeddedPython& embedded_python();

}  // namespace tritonrt::detail
