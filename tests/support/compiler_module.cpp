// Compiled into every program that links tritonrt's internals statically (tritonrt_internals):
// such a program has no libtritonrt beside which to find the compiler module, so it is pointed
// at the build's, unless TRITONRT_PYTHON_MODULE already names one. Before main: the library
// reads the variable on its first compile.

#include <cstdlib>

namespace {

[[maybe_unused]] const bool module_named = setenv("TRITONRT_PYTHON_MODULE", TRITONRT_COMPILER_MODULE, 0) == 0;

}  // namespace
