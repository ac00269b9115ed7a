// An NVTX injection library for the tests: loaded through NVTX_INJECTION64_PATH, as Nsight
// Systems loads its own, it appends each range pushed ("push <name>") and popped ("pop") to
// the file named by TRITONRT_TEST_NVTX_LOG.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

namespace {

void record(const char* what, const char* name) {
  const char* path = std::getenv("TRITONRT_TEST_NVTX_LOG");
  if (path == nullptr) return;
  if (FILE* log = std::fopen(path, "a")) {
    std::fprintf(log, "%s%s%s\n", what, name != nullptr ? " " : "", name != nullptr ? name : "");
    std::fclose(log);
  }
}

int depth = 0;

int push(const char* name) {
  record("push", name);
  return depth++;
}

int pop() {
  record("pop", nullptr);
  return --depth;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) == 0 ||
      size <= NVTX_CBID_CORE_RangePop) {
    return 0;
  }
  *table[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(&push);
  *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  return 1;
}
