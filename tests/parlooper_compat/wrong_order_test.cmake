# ctest -P script: a file that includes PARLOOPER's common_utils.h (and so PARLOOPER's
# threaded_loops.h) before <weft/parlooper/threaded_loops.h> must fail to compile with weft's
# message naming the fix, not with redefinition errors. Run by tests/parlooper_compat/CMakeLists.txt.
cmake_minimum_required(VERSION 3.25)
if(NOT CXX OR NOT INCLUDES OR NOT WORK_DIR)
  message(FATAL_ERROR "usage: cmake -DCXX=... -DINCLUDES=a;b -DWORK_DIR=... -P wrong_order_test.cmake")
endif()
file(WRITE ${WORK_DIR}/wrong_order.cpp
  "#include \"common_utils.h\"\n#include <weft/parlooper/threaded_loops.h>\nint main() { return 0; }\n")
set(flags -std=c++14 -fopenmp -fsyntax-only)
foreach(dir IN LISTS INCLUDES)
  list(APPEND flags -I${dir})
endforeach()
execute_process(COMMAND ${CXX} ${flags} ${WORK_DIR}/wrong_order.cpp RESULT_VARIABLE rc OUTPUT_VARIABLE log
                ERROR_VARIABLE log)
if(rc EQUAL 0)
  message(FATAL_ERROR "PARLOOPER's header first compiled; weft's header should have stopped it")
endif()
if(NOT log MATCHES "weft: PARLOOPER's threaded_loops.h was included before")
  message(FATAL_ERROR "the build failed without weft's message:\n${log}")
endif()
if(log MATCHES "redefinition")
  message(FATAL_ERROR "weft's message came with redefinition errors after it:\n${log}")
endif()
message(STATUS "PARLOOPER's header first: weft's message, as expected")
