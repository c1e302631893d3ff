# racelab_add_scenario(NAME FILE [BUDGET_SCALE X] [LABELS L...] [TIMEOUT S])
#
# Registers a scenario file as the CTest test `scenario.NAME`, which runs
#   racelab ci FILE --junit <build>/junit/NAME.xml --out <build>/scenario-reports/NAME
# and passes only if every expectation in the file holds (racelab ci exits 0).
# BUDGET_SCALE shrinks the file's trial and time budgets for CI (0.1 = a tenth);
# reproduces_within clauses keep their full trial count. Each test runs as one
# process (--jobs 1): CTest already runs tests in parallel.
function(racelab_add_scenario name file)
  cmake_parse_arguments(ARG "" "BUDGET_SCALE;TIMEOUT" "LABELS" ${ARGN})
  set(extra)
  if(ARG_BUDGET_SCALE)
    list(APPEND extra --budget-scale ${ARG_BUDGET_SCALE})
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 900)
  endif()
  add_test(NAME scenario.${name}
           COMMAND $<TARGET_FILE:racelab> ci ${file}
                   --junit ${CMAKE_BINARY_DIR}/junit/${name}.xml
                   --out ${CMAKE_BINARY_DIR}/scenario-reports/${name}
                   --jobs 1 --no-progress ${extra})
  set_tests_properties(scenario.${name} PROPERTIES LABELS "scenario;${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()
