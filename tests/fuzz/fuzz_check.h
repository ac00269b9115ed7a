// What every harness shares: an invariant that fails aborts (libFuzzer saves the input), and
// the check that an expected error carries tritonrt's one message format.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#define FUZZ_CHECK(condition)                                                                \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

// Every tritonrt error is built by detail::raise, so its message starts "tritonrt: ".
inline void check_error_format(const std::exception& e) { FUZZ_CHECK(std::strncmp(e.what(), "tritonrt: ", 10) == 0); }
