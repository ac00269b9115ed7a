// Compiles that run at once: an autotuned kernel's configs are independent compiles, which
// Triton makes one after another inside its timing loop; tritonrt makes a tuning's (and
// compile_configs') on several threads before timing any. Triton's compiler releases the GIL in
// its passes and runs ptxas as a child process, so threads of one process suffice.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

namespace tritonrt::detail {

/// How many compiles run at once: TRITONRT_COMPILE_THREADS (1 compiles one after another, as
/// Triton does), else the processors this process may run on.
std::size_t compile_threads();

/// Runs job(0) ... job(n - 1) on up to compile_threads() threads, this one among them, with the
/// GIL released while it waits; returns what each job threw (null where it returned).
std::vector<std::exception_ptr> run_concurrently(std::size_t n, const std::function<void(std::size_t)>& job);

}  // namespace tritonrt::detail
