// tritonrt: run @triton.jit kernels from C++. Include this one header.
#pragma once

#include "tritonrt/arg.h"
#include "tritonrt/artifact.h"
#include "tritonrt/bundle.h"
#include "tritonrt/dtype.h"
#include "tritonrt/error.h"
#include "tritonrt/jit_function.h"
#include "tritonrt/launch.h"
#include "tritonrt/log.h"
#include "tritonrt/options.h"
#include "tritonrt/signature.h"
#include "tritonrt/tensor_descriptor.h"
#include "tritonrt/version.h"
