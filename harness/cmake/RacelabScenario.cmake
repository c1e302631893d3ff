# racelab_add_scenario(NAME FILE [RACELAB TARGET] [BUDGET_SCALE X] [LABELS L...] [TIMEOUT S])
#
# Registers a scenario file as the CTest test `scenario.NAME`, which runs
#   racelab ci FILE --junit <build>/junit/NAME.xml --out <build>/scenario-reports/NAME
# and passes only if every expectation in the file holds (racelab ci exits 0).
# RACELAB names the executable that runs it: a binary of your own made with
# racelab_add_executable(), whose workloads the file names. Without it: the
# racelab target of this build, else the installed racelab::racelab.
# BUDGET_SCALE shrinks the file's trial and time budgets for CI (0.1 = a tenth);
# reproduces_within clauses keep their full trial count. Each test runs as one
# process (--jobs 1): CTest already runs tests in parallel.
function(racelab_add_scenario name file)
  cmake_parse_arguments(ARG "" "BUDGET_SCALE;TIMEOUT;RACELAB" "LABELS" ${ARGN})
  set(extra)
  if(ARG_BUDGET_SCALE)
    list(APPEND extra --budget-scale ${ARG_BUDGET_SCALE})
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 900)
  endif()
  if(NOT ARG_RACELAB)
    if(TARGET racelab)
      set(ARG_RACELAB racelab)
    elseif(TARGET racelab::racelab)
      set(ARG_RACELAB racelab::racelab)
    else()
      message(FATAL_ERROR "racelab_add_scenario(${name}): no racelab executable (pass RACELAB <target>)")
    endif()
  endif()
  add_test(NAME scenario.${name}
           COMMAND $<TARGET_FILE:${ARG_RACELAB}> ci ${file}
                   --junit ${CMAKE_BINARY_DIR}/junit/${name}.xml
                   --out ${CMAKE_BINARY_DIR}/scenario-reports/${name}
                   --jobs 1 --no-progress ${extra})
  set_tests_properties(scenario.${name} PROPERTIES LABELS "scenario;${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()
