// A shared library whose only content is the kernels tritonrt_add_kernels embeds in it.
extern "C" int tritonrt_consumer_plugin() { return 1; }
