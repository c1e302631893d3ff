# racelab_add_scenario(NAME FILE) -- registers a scenario file as a CTest test
# that runs `racelab ci FILE` and passes only if every expectation holds.
function(racelab_add_scenario name file)
  cmake_parse_arguments(ARG "" "BUDGET_SCALE" "LABELS" ${ARGN})
  set(extra)
  if(ARG_BUDGET_SCALE)
    list(APPEND extra --budget-scale ${ARG_BUDGET_SCALE})
  endif()
  add_test(NAME scenario.${name}
           COMMAND $<TARGET_FILE:racelab> ci ${file} --junit ${CMAKE_BINARY_DIR}/junit/${name}.xml ${extra})
  set_tests_properties(scenario.${name} PROPERTIES LABELS "scenario;${ARG_LABELS}")
endfunction()
