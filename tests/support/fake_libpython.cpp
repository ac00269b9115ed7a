// Answers Py_GetVersion as a Python of another minor version does, and has nothing else:
// tritonrt must refuse it before it uses any other Python symbol (test_embedded_python.py).
extern "C" const char* Py_GetVersion() { return "3.99.0 (tritonrt test stand-in)"; }
