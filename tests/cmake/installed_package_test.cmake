# Installs the build into a fresh prefix and builds and runs examples/ops_gemm against it, as a
# user of the installed package would: find_package(weft) must bring everything the operators
# need (their dependencies included). Run by ctest (cmake/InstalledPackage.OpsGemmExample) with
#   -DBUILD_DIR=<weft's build> -DEXAMPLE_DIR=<examples/ops_gemm> -DWORK_DIR=<scratch folder>
#   -DCXX_COMPILER=<the build's compiler> -DGENERATOR=<the build's generator>
foreach(var BUILD_DIR EXAMPLE_DIR WORK_DIR CXX_COMPILER GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "installed_package_test.cmake needs -D${var}=...")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run_step("configuring the example" ${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/example -G ${GENERATOR}
         -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
run_step("building the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/example)
# The example must find the operators' headers and libraries in the prefix, not in the source tree.
file(GLOB ops_headers ${prefix}/include/weft/ops/gemm.hpp)
if(NOT ops_headers)
  message(FATAL_ERROR "the installed prefix has no include/weft/ops/gemm.hpp")
endif()
run_step("running the example" ${WORK_DIR}/example/ops_gemm)
message(STATUS "${step_output}")
if(NOT step_output MATCHES "ops_gemm: ok")
  message(FATAL_ERROR "the example did not say ok:\n${step_output}")
endif()
