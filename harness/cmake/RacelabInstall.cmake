# What `cmake --install` puts under the prefix, and the CMake package a user
# finds with find_package(racelab) (docs/USING.md, "Your own workloads, with LibTorch"):
#
#   bin/racelab                       the command line with the catalogue's workloads (no LibTorch)
#   bin/racelab-torch                 its LibTorch part, which racelab runs itself (cli/torch_part.h)
#   bin/racelab-cc, bin/racelab-c++   gcc / g++ building a program with memory-access points
#   include/racelab/*.h               the instrumentation API, racelab.h (C), cli.h,
#                                     op_points.h (op-level points in LibTorch programs),
#                                     cell.h (harness/engine/cell.h: run_cell, for racelab::engine);
#                                     the public headers only: the engine's others are its own
#   lib/libracelab_*.a                the libraries (libracelab_tsan_rt.a: memory-access points)
#   lib/libracelab_op_points_preload.so  op-level points, LD_PRELOADed into a LibTorch program
#   share/racelab/scenarios/          the catalogue (what `racelab compare` runs by default)
#   share/racelab/racelab-tsan.specs  the gcc specs racelab-cc compiles with
#   lib/cmake/racelab/                racelabConfig.cmake, its version file, the
#                                     exported targets, racelab_add_executable(),
#                                     racelab_add_scenario() and racelab_instrument_memory()
#
# Two export sets: racelab::point, racelab::engine and the racelab binary need no
# LibTorch; racelab::op_points, racelab::cli, racelab::main and what they link (the compile layer,
# the trainer, the reports) do, and the config loads them only when the user's
# own find_package(Torch) succeeds. Nothing installed names a path of the
# machine that built it: include directories are relative to the prefix, and
# LibTorch comes in as racelab::torch, filled from the user's Torch.
include(CMakePackageConfigHelpers)
set(RACELAB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/racelab)

install(TARGETS racelab_point racelab_files racelab_engine racelab_tsan_rt racelab EXPORT racelabTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS racelab_torch racelab_op_points racelab_capture racelab_compile racelab_trainer racelab_campaign racelab_reports racelab_cli racelab_main
        EXPORT racelabCliTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Run by racelab, never by a user or a build: installed, not exported.
install(TARGETS racelab-torch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Preloaded, never linked: installed, not exported.
install(TARGETS racelab_op_points_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Memory-access points: the wrappers and the specs file they compile with.
install(PROGRAMS ${PROJECT_BINARY_DIR}/racelab-cc ${PROJECT_BINARY_DIR}/racelab-c++ DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/harness/tsan_rt/racelab-tsan.specs DESTINATION ${CMAKE_INSTALL_DATADIR}/racelab)
install(EXPORT racelabTargets NAMESPACE racelab:: DESTINATION ${RACELAB_CMAKE_DIR})
install(EXPORT racelabCliTargets NAMESPACE racelab:: DESTINATION ${RACELAB_CMAKE_DIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/harness/include/racelab ${PROJECT_SOURCE_DIR}/cli/include/racelab
                  ${PROJECT_SOURCE_DIR}/torch_points/include/racelab
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
# The engine's one public header: a program that embeds the engine includes
# <racelab/cell.h>, and nothing else of engine/ is an API.
install(FILES ${PROJECT_SOURCE_DIR}/harness/engine/cell.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/racelab)

# The Python host (racelab pyrun, --python): the package the worker imports and
# the library it loads, found by racelab from its own prefix
# (engine/python_host.cpp); pip install <prefix>/share/racelab/python puts
# the package into a venv of the user's.
if(TARGET racelab_host)
  install(TARGETS racelab_host LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/racelab DESTINATION ${CMAKE_INSTALL_DATADIR}/racelab/python
          FILES_MATCHING PATTERN "*.py" PATTERN "*.json" PATTERN "__pycache__" EXCLUDE)
  install(FILES ${PROJECT_SOURCE_DIR}/python/pyproject.toml DESTINATION ${CMAKE_INSTALL_DATADIR}/racelab/python)
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/racelab/scenarios
        FILES_MATCHING PATTERN "*.json" PATTERN "SCHEMA.md" PATTERN "workloads" EXCLUDE)

configure_package_config_file(${PROJECT_SOURCE_DIR}/harness/cmake/racelabConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/racelabConfig.cmake INSTALL_DESTINATION ${RACELAB_CMAKE_DIR})
# 0.x: a minor version may break the API, so only the same minor version matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/racelabConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/racelabConfig.cmake ${PROJECT_BINARY_DIR}/racelabConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/harness/cmake/RacelabExecutable.cmake
              ${PROJECT_SOURCE_DIR}/harness/cmake/RacelabScenario.cmake
              ${PROJECT_SOURCE_DIR}/harness/cmake/RacelabMemory.cmake
        DESTINATION ${RACELAB_CMAKE_DIR})
