# ctest -P script: weft_check_no_dropped_sources (cmake/WeftSourceCheck.cmake) fails the configure
# step for a .cpp that no target compiles, and accepts sources in nested folders that a recursive
# glob collects. Builds two throwaway projects under WORK_DIR; run by tests/CMakeLists.txt.
cmake_minimum_required(VERSION 3.25)
if(NOT WEFT_SOURCE_DIR OR NOT WORK_DIR)
  message(FATAL_ERROR "usage: cmake -DWEFT_SOURCE_DIR=... -DWORK_DIR=... -P source_check_test.cmake")
endif()

# A project with lib/a.cpp and lib/deep/b.cpp globbed recursively, and, with `stray`, lib/c.cpp
# listed nowhere (the library names its sources explicitly then).
function(configure_fixture name stray out_rc out_log)
  set(dir ${WORK_DIR}/${name})
  file(REMOVE_RECURSE ${dir})
  file(WRITE ${dir}/lib/a.cpp "int a() { return 1; }\n")
  file(WRITE ${dir}/lib/deep/b.cpp "int b() { return 2; }\n")
  if(stray)
    file(WRITE ${dir}/lib/c.cpp "int c() { return 3; }\n")
    set(sources "lib/a.cpp lib/deep/b.cpp")
  else()
    set(sources "\${globbed}")
  endif()
  file(WRITE ${dir}/CMakeLists.txt
    "cmake_minimum_required(VERSION 3.25)\nproject(fixture LANGUAGES CXX)\n"
    "include(${WEFT_SOURCE_DIR}/cmake/WeftSourceCheck.cmake)\n"
    "file(GLOB_RECURSE globbed CONFIGURE_DEPENDS \${PROJECT_SOURCE_DIR}/lib/*.cpp)\n"
    "add_library(fixture STATIC ${sources})\n"
    "weft_check_no_dropped_sources(lib)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${dir} -B ${dir}/build RESULT_VARIABLE rc OUTPUT_VARIABLE log
                  ERROR_VARIABLE log)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_log} "${log}" PARENT_SCOPE)
endfunction()

configure_fixture(nested OFF rc log)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a tree whose every source is built (one in a nested folder) was rejected:\n${log}")
endif()

configure_fixture(stray ON rc log)
if(rc EQUAL 0)
  message(FATAL_ERROR "a source file that no target compiles (lib/c.cpp) was accepted")
endif()
if(NOT log MATCHES "compiled into no target" OR NOT log MATCHES "lib/c\\.cpp")
  message(FATAL_ERROR "the error does not name the dropped file lib/c.cpp:\n${log}")
endif()
message(STATUS "source check: nested sources accepted, a dropped source named")
