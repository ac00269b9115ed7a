// The fixture of the launch tests on the stand-in driver (tests/support/fake_cuda): each test
// starts from a reset driver and reads what reached cuLaunchKernel.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "fake_cuda.h"
#include "tritonrt/tritonrt.h"

namespace tritonrt::test {

class FakeDriverLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      (void)Target::current();  // loads the driver tritonrt uses, where the fake's API is found
    } catch (const DriverError& e) {
      GTEST_SKIP() << "no CUDA driver could be loaded; put the fake's directory on LD_LIBRARY_PATH: " << e.what();
    }
    if (!fake_cuda_api(&fake_)) GTEST_SKIP() << "the libcuda.so.1 loaded is a real driver, not tritonrt's fake";
    fake_.reset();
  }

  FakeCudaStats stats() const {
    FakeCudaStats s;
    fake_.get_stats(&s);
    return s;
  }

  FakeCudaLaunch last_launch() const {
    FakeCudaLaunch launch{};
    EXPECT_EQ(fake_.last_launches(&launch, 1), 1u);
    return launch;
  }

  FakeCudaApi fake_{};
};

// A parameter's bytes as T, after checking the kernel declares it with T's size.
template <class T>
T param(const FakeCudaLaunch& launch, unsigned i) {
  EXPECT_EQ(launch.param_size[i], sizeof(T)) << "parameter " << i;
  T value;
  std::memcpy(&value, fake_cuda_param(&launch, i), sizeof value);
  return value;
}

inline LaunchConfig grid(std::int64_t x, std::int64_t y = 1, std::int64_t z = 1) {
  LaunchConfig config;
  config.grid = Grid{x, y, z};
  return config;
}

}  // namespace tritonrt::test
