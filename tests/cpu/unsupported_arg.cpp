// Must not compile: CTest checks that the static_assert message explains why.
#include "tritonrt/tritonrt.h"

struct NotAnArgument {};

int main() {
  tritonrt::Arg a;
  tritonrt::pack_arg(a, NotAnArgument{});
}
