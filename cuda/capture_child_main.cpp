// cuda/capture_child_main.cpp -- racelab-cuda-capture, the isolate_process child (capture_child.h).
#include "cuda/capture_child.h"

int main(int argc, char** argv) { return racelab::cuda::capture_child_main(argc, argv); }
