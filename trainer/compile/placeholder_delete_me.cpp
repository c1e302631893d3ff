// Removed once the compile layer has sources (an empty library is a CMake error).
namespace trainer { int compile_layer_placeholder = 0; }
