# racelab_add_executable(NAME SOURCE...)
#
# Makes NAME, an executable that is the racelab command line (run, reproduce,
# replay, minimize, list, validate, compare, ci, ...) for the workloads its
# SOURCEs register with racelab::WorkloadRegistrar (racelab/workload.h). No
# main() to write: it links racelab::main (racelab/cli.h). Trials run in worker
# processes that re-execute NAME, so the workloads must be registered by NAME's
# own objects (sources, or an OBJECT library), not by a static library's member
# that nothing references: the linker would drop it.
function(racelab_add_executable name)
  if(NOT ARGN)
    message(FATAL_ERROR "racelab_add_executable(${name}): no sources (the files that register workloads)")
  endif()
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE racelab::main)
endfunction()
