# racelab_instrument_memory(<target>) -- make every shared memory access and
# atomic of <target>'s own sources a point of `racelab exec`
# (docs/ARCHITECTURE.md, "Memory-access points"):
#
#   add_executable(my_prog my_prog.c)
#   racelab_instrument_memory(my_prog)
#   # racelab exec -s pct:2 -n 1000 -- $<TARGET_FILE:my_prog>
#
# Compiles the target's C and C++ sources with ThreadSanitizer's
# instrumentation and links racelab::tsan_rt (libracelab_tsan_rt.a) in place
# of libtsan: -fsanitize=thread is a compile option only, so the link never
# pulls libtsan in. Libraries the target links are not instrumented; call this
# on them too to see their accesses. Not for a target of a build that is
# itself under ThreadSanitizer (RACELAB_TSAN): that one links libtsan.
function(racelab_instrument_memory target)
  if(NOT TARGET racelab::tsan_rt)
    message(FATAL_ERROR "racelab_instrument_memory(${target}): racelab::tsan_rt is not defined "
                        "(find_package(racelab) first)")
  endif()
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=thread>")
  target_link_libraries(${target} PRIVATE racelab::tsan_rt)
endfunction()
